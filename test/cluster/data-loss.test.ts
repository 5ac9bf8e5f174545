import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisTimers } from '@sundial/redis';
import type { AppProcess, RedisServer } from '@sundial/testing/harness';
import {
  clusterEnv,
  ensureBuilt,
  killAll,
  readRuns,
  spawnApp,
  startRedis,
  waitFor,
} from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { appLines } from './app-fixture';

const LOST = "Redis lost Sundial's data";
/** A reconnect and the 5 s look of each process, with room on a busy host. */
const NOTICE_MS = 20_000;

const lossLines = (app: AppProcess) => appLines(app, LOST);
const lostMetric = async (app: AppProcess) =>
  /^sundial_redis_data_lost_total (\d+)$/m.exec((await app.api<string>('GET', '/metrics')).body)?.[1];

/** What a case's cluster holds: its private Redis, its scheduler and worker, a client on it. */
interface Cluster {
  redis: RedisServer;
  apps: AppProcess[];
  client: () => RedisTimers;
}

/**
 * The clusters the cases started, closed after the suite: the cases run side by side (`it.concurrent`),
 * each on a cluster of its own, and jest runs no afterEach for them. Most of each is waiting on real time
 * (a process's 5 s look, a timer due past it) and on the processes' start.
 */
const started: { cluster: Cluster; dir: string; timers?: RedisTimers }[] = [];
beforeAll(() => ensureBuilt(), 180_000);
afterAll(async () => {
  for (const { cluster, dir, timers } of started) {
    await killAll(cluster.apps);
    await timers?.dispose();
    await cluster.redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

/**
 * Starts a private Redis with `args`, then `seed` on it (the data the processes start on), then a
 * scheduler following a schedules file, and a worker.
 */
async function cluster(args: string[] = [], seed?: (redisUrl: string) => Promise<void>): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), 'sundial-data-loss-'));
  const redis = await startRedis({ args });
  const entry: (typeof started)[number] = {
    dir,
    cluster: {
      redis,
      apps: [],
      client: () => (entry.timers ??= new RedisTimers({ connection: redis.url, partitions: 2 })),
    },
  };
  started.push(entry);
  await seed?.(redis.url);
  writeFileSync(
    join(dir, 'schedules.yaml'),
    'timers:\n  - { key: "ping", handler: "record", every: "1h" }\n',
  );
  const env = clusterEnv(redis.url, { SUNDIAL_SCHEDULES_FILE: join(dir, 'schedules.yaml') });
  entry.cluster.apps.push(await spawnApp('scheduler', 'scheduler', env));
  entry.cluster.apps.push(await spawnApp('worker', 'worker', clusterEnv(redis.url)));
  return entry.cluster;
}

/**
 * Redis losing the timers is said, counted and repaired (docs/operations.md SundialRedisDataLost); a
 * restart that keeps the data, and a rolling upgrade from a release without the data marker
 * (docs/operations.md "Upgrading"), are no loss.
 */
describe('cluster: Redis losing the timers, and what is no loss', () => {
  it.concurrent(
    'a restart without persistence: each process logs one error with the fix; the schedules-file row comes back',
    async () => {
      const state = await cluster();
      const { client } = state;
      const startedAt = Date.now();
      await client().schedule({ key: 'api:one', handler: 'record', every: '1h' });
      // A first start on an empty Redis is no loss.
      expect(state.apps.map(lossLines)).toEqual([[], []]);

      await state.redis.restart(100);

      for (const app of state.apps) {
        const [line] = await waitFor(() => (lossLines(app).length > 0 ? lossLines(app) : undefined), {
          timeoutMs: NOTICE_MS, // deadline
          what: `${app.name} to notice the loss`,
        });
        expect(line.level).toBe('error');
        expect(line.msg).toContain("under prefix 'sundial'");
        expect(line.msg).toContain('Every timer created before is gone');
        expect(line.fix).toContain('appendonly yes');
        expect(Date.parse(line.since!)).toBeGreaterThan(startedAt - 60_000);
        expect(Date.parse(line.since!)).toBeLessThanOrEqual(startedAt);
        await waitFor(async () => (await lostMetric(app)) === '1', {
          timeoutMs: NOTICE_MS, // deadline
          what: `${app.name}'s sundial_redis_data_lost_total to be 1`,
        });
      }
      // The reset event the processes published registers the file's rows again; an API timer stays gone.
      await waitFor(async () => (await client().get('ping')) ?? undefined, {
        timeoutMs: NOTICE_MS, // deadline
        what: 'the schedules-file row to be registered again',
      });
      expect(await client().get('api:one')).toBeNull();
      expect(state.apps.map((app) => lossLines(app).length)).toEqual([1, 1]);
    },
    120_000,
  );

  it.concurrent(
    'a restart that keeps the data: no line, no count: the marker the processes saw is still there',
    async () => {
      const state = await cluster(['--appendonly', 'yes', '--appendfsync', 'always']);
      const { client } = state;
      await state.redis.restart(100);
      // Due past the reconnect check and one 5 s look of every process: its run shows they have looked.
      const due = new Date(Date.now() + 6_000).toISOString();
      await client().schedule({ key: 'after', handler: 'record', at: due });
      const records = new Redis(`${state.redis.url}/1`);
      try {
        await waitFor(async () => (await readRuns(records)).some((run) => run.key === 'after') || undefined, {
          timeoutMs: NOTICE_MS, // deadline
          what: 'the timer due after the restart to run',
        });
      } finally {
        records.disconnect();
      }
      expect(state.apps.map(lossLines)).toEqual([[], []]);
      for (const app of state.apps) expect(await lostMetric(app)).toBe('0');
    },
    120_000,
  );

  it.concurrent(
    'a rolling upgrade from a release without the data marker: processes starting on data the release before wrote (timers, P:partitions, no P:epoch) write the marker and say nothing',
    async () => {
      // The data of the release before P:epoch: the same rows and count, without the marker.
      let due = 0;
      let startedAt = 0;
      const state = await cluster([], async (url) => {
        const before = new RedisTimers({ connection: url, partitions: 2 });
        due = Date.now() + 15_000; // past the processes' start and their first 5 s look
        await before.schedule({ key: 'old:once', handler: 'record', at: new Date(due).toISOString() });
        await before.dispose();
        const raw = new Redis(url);
        await raw.del('sundial:epoch');
        raw.disconnect();
        startedAt = Date.now();
      });
      const records = new Redis(`${state.redis.url}/1`);
      const raw = new Redis(state.redis.url);
      try {
        const run = await waitFor(async () => (await readRuns(records)).find((r) => r.key === 'old:once'), {
          timeoutMs: 30_000, // deadline
          what: "the old release's timer to run",
        });
        expect(run.at).toBeGreaterThanOrEqual(due);
        expect(Number((await raw.get('sundial:epoch'))?.split('-')[0])).toBeGreaterThanOrEqual(startedAt);
        // no loss line, the watch's nor a client's (`Sundial: Redis lost …`)
        expect(state.apps.map((app) => app.lines.filter((line) => line.includes(LOST)))).toEqual([[], []]);
        for (const app of state.apps) expect(await lostMetric(app)).toBe('0');
      } finally {
        records.disconnect();
        raw.disconnect();
      }
    },
    120_000,
  );
});
