import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RedisTimers } from '@sundial/redis';
import type { AppProcess, RedisServer } from '@sundial/testing';
import { clusterEnv, ensureBuilt, killAll, readRuns, spawnApp, startRedis, waitFor } from '@sundial/testing';
import { Redis } from 'ioredis';
import { appLines } from './app-fixture';

const LOST = "Redis lost Sundial's data";
/** A reconnect and the 5 s look of each process, with room on a busy host. */
const NOTICE_MS = 20_000;

const lossLines = (app: AppProcess) => appLines(app, LOST);
const lostMetric = async (app: AppProcess) =>
  /^sundial_redis_data_lost_total (\d+)$/m.exec((await app.api<string>('GET', '/metrics')).body)?.[1];

/**
 * Starts a private Redis with `args`, then `seed` on it (the data the processes start on), then a
 * scheduler following a schedules file, and a worker.
 */
function cluster(args: string[] = [], seed?: (redisUrl: string) => Promise<void>) {
  const state = { redis: undefined as unknown as RedisServer, apps: [] as AppProcess[] };
  const dir = mkdtempSync(join(tmpdir(), 'sundial-data-loss-'));
  let timers: RedisTimers | undefined;
  beforeAll(async () => {
    [state.redis] = await Promise.all([startRedis({ args }), ensureBuilt()]);
    await seed?.(state.redis.url);
    writeFileSync(
      join(dir, 'schedules.yaml'),
      'timers:\n  - { key: "ping", handler: "record", every: "1h" }\n',
    );
    const env = clusterEnv(state.redis.url, { SUNDIAL_SCHEDULES_FILE: join(dir, 'schedules.yaml') });
    state.apps.push(await spawnApp('scheduler', 'scheduler', env));
    state.apps.push(await spawnApp('worker', 'worker', clusterEnv(state.redis.url)));
  }, 180_000);
  afterAll(async () => {
    await killAll(state.apps);
    await timers?.dispose();
    await state.redis?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const client = () => (timers ??= new RedisTimers({ connection: state.redis.url, partitions: 2 }));
  return { state, client };
}

describe('cluster: Redis losing the timers is said, counted and repaired (docs/operations.md SundialRedisDataLost)', () => {
  const { state, client } = cluster();

  it('a restart without persistence: each process logs one error with the fix; the schedules-file row comes back', async () => {
    const startedAt = Date.now();
    await client().schedule({ key: 'api:one', handler: 'record', every: '1h' });
    // A first start on an empty Redis is no loss.
    expect(state.apps.map(lossLines)).toEqual([[], []]);

    await state.redis.restart(100);

    for (const app of state.apps) {
      const [line] = await waitFor(() => (lossLines(app).length > 0 ? lossLines(app) : undefined), {
        timeoutMs: NOTICE_MS,
        what: `${app.name} to notice the loss`,
      });
      expect(line.level).toBe('error');
      expect(line.msg).toContain("under prefix 'sundial'");
      expect(line.msg).toContain('Every timer created before is gone');
      expect(line.fix).toContain('appendonly yes');
      expect(Date.parse(line.since!)).toBeGreaterThan(startedAt - 60_000);
      expect(Date.parse(line.since!)).toBeLessThanOrEqual(startedAt);
      await waitFor(async () => (await lostMetric(app)) === '1', {
        timeoutMs: NOTICE_MS,
        what: `${app.name}'s sundial_redis_data_lost_total to be 1`,
      });
    }
    // The reset event the processes published registers the file's rows again; an API timer stays gone.
    await waitFor(async () => (await client().get('ping')) ?? undefined, {
      timeoutMs: NOTICE_MS,
      what: 'the schedules-file row to be registered again',
    });
    expect(await client().get('api:one')).toBeNull();
    expect(state.apps.map((app) => lossLines(app).length)).toEqual([1, 1]);
  }, 60_000);
});

describe('cluster: a Redis restart that keeps the data is no loss', () => {
  const { state, client } = cluster(['--appendonly', 'yes', '--appendfsync', 'always']);

  it('no line, no count: the marker the processes saw is still there', async () => {
    await state.redis.restart(100);
    // Due past the reconnect check and one 5 s look of every process: its run shows they have looked.
    const due = new Date(Date.now() + 6_000).toISOString();
    await client().schedule({ key: 'after', handler: 'record', at: due });
    const records = new Redis(`${state.redis.url}/1`);
    try {
      await waitFor(async () => (await readRuns(records)).some((run) => run.key === 'after') || undefined, {
        timeoutMs: NOTICE_MS,
        what: 'the timer due after the restart to run',
      });
    } finally {
      records.disconnect();
    }
    expect(state.apps.map(lossLines)).toEqual([[], []]);
    for (const app of state.apps) expect(await lostMetric(app)).toBe('0');
  }, 60_000);
});

describe('cluster: a rolling upgrade from a release without the data marker is no loss (docs/operations.md "Upgrading")', () => {
  // The data of the release before P:epoch: the same rows and count, without the marker.
  let due = 0;
  let startedAt = 0;
  const { state } = cluster([], async (url) => {
    const before = new RedisTimers({ connection: url, partitions: 2 });
    due = Date.now() + 15_000; // past the processes' start and their first 5 s look
    await before.schedule({ key: 'old:once', handler: 'record', at: new Date(due).toISOString() });
    await before.dispose();
    const raw = new Redis(url);
    await raw.del('sundial:epoch');
    raw.disconnect();
    startedAt = Date.now();
  });

  it('processes starting on data the release before wrote (timers, P:partitions, no P:epoch) write the marker and say nothing', async () => {
    const records = new Redis(`${state.redis.url}/1`);
    const raw = new Redis(state.redis.url);
    try {
      const run = await waitFor(async () => (await readRuns(records)).find((r) => r.key === 'old:once'), {
        timeoutMs: 30_000,
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
  }, 60_000);
});
