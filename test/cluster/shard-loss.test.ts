import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type LogFields, silentLogger } from '@sundial/core';
import { keySlot, RedisTimers, SundialKeys } from '@sundial/redis';
import {
  type AppProcess,
  ensureBuilt,
  killAll,
  type RedisCluster,
  spawnApp,
  startRedisCluster,
  waitFor,
} from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { appLines } from './app-fixture';

/** One node of the cluster. */
type RedisServer = RedisCluster['nodes'][number];

const PARTITIONS = 6;
const LOST = "Redis lost Sundial's data";
/** The 5 s look of each process, with room on a busy host. */
const NOTICE_MS = 20_000;
/** The standalone scheduler runs one watch; the standalone worker serve's and its SundialWorkerModule's. */
const WATCHES = 3;

const lostMetric = async (app: AppProcess) =>
  /^sundial_redis_data_lost_total (\d+)$/m.exec((await app.api<string>('GET', '/metrics')).body)?.[1];

/** `file-<n>` keys, one in each partition (the schedules file's rows). */
function keysInEveryPartition(keys: SundialKeys): string[] {
  const byPartition = new Map<number, string>();
  for (let n = 0; byPartition.size < keys.partitions; n++) {
    const partition = keys.partitionOf(`file-${n}`);
    if (!byPartition.has(partition)) byPartition.set(partition, `file-${n}`);
  }
  return [...byPartition.entries()].sort(([a], [b]) => a - b).map(([, key]) => key);
}

/** A key of `partitions` (`api-<n>`). */
function keyIn(keys: SundialKeys, partitions: number[]): string {
  for (let n = 0; ; n++) if (partitions.includes(keys.partitionOf(`api-${n}`))) return `api-${n}`;
}

/**
 * docs/spec.md §4.1 on a real 3-primary Redis Cluster: one shard loses its data alone (FLUSHALL on that
 * node: what a failover to an empty replica or a restart without AOF of one primary leaves) while the
 * others, and `P:epoch`, keep theirs. Each process says it once naming the lost partitions, counts it
 * (a process with only a client says it, without a counter), one `reset` is published, and the schedules-file rows of those partitions are registered again.
 */
describe('a Redis Cluster shard that loses its data alone', () => {
  const keys = new SundialKeys('sundial', PARTITIONS, 'spread');
  const fileKeys = keysInEveryPartition(keys);
  const dir = mkdtempSync(join(tmpdir(), 'sundial-shard-loss-'));
  let cluster: RedisCluster;
  let apps: AppProcess[] = [];
  /** the test's own client: a process with no watch, which looks itself (docs/spec.md §4.1) */
  let client: RedisTimers;
  const clientLines: { message: string; fields?: LogFields }[] = [];
  /** the node flushed, the partitions it holds, and a direct connection to each node */
  let victim: RedisServer;
  let lost: number[];
  const direct = new Map<RedisServer, Redis>();
  const nodeOf = (name: string) => cluster.nodeOfSlot(keySlot(/\{(.*)\}/.exec(name)?.[1] ?? name));

  beforeAll(async () => {
    [cluster] = await Promise.all([startRedisCluster(3), ensureBuilt()]);
    for (const node of cluster.nodes) direct.set(node, new Redis(node.url));
    const owners = await Promise.all(keys.all().map((n) => nodeOf(keys.partitionMarker(n))));
    const globals = new Set(await Promise.all([keys.dataMarker, keys.partitionCount].map(nodeOf)));
    // A shard that holds partitions but neither `P:epoch` nor `P:partitions`, if the slots allow it.
    const candidates = cluster.nodes.filter((node) => owners.includes(node));
    victim = candidates.find((node) => !globals.has(node)) ?? candidates[0];
    lost = keys.all().filter((n) => owners[n] === victim);
    // The markers as a first start writes them, before the apps start: each watch's first look then only
    // reads them, so the GET a test sees on the victim is a look that saw them.
    for (const name of [keys.dataMarker, ...keys.all().map((n) => keys.partitionMarker(n))])
      await direct.get(await nodeOf(name))!.set(name, `${Date.now()}-${'0a'.repeat(6)}`);
    writeFileSync(
      join(dir, 'schedules.yaml'),
      `timers:\n${fileKeys.map((key) => `  - { key: "${key}", handler: "log", every: "1h" }\n`).join('')}`,
    );
    const env = {
      REDIS_URL: cluster.url,
      SUNDIAL_PARTITIONS: String(PARTITIONS),
      SUNDIAL_RECONCILE_MS: '300',
    };
    apps = await Promise.all([
      spawnApp('scheduler', 'scheduler', { ...env, SUNDIAL_SCHEDULES_FILE: join(dir, 'schedules.yaml') }),
      spawnApp('worker', 'worker', env),
    ]);
    const logger = {
      ...silentLogger,
      error: (message: string, fields?: LogFields) => clientLines.push({ message, fields }),
    };
    client = new RedisTimers({ connection: cluster.url, partitions: PARTITIONS, logger });
  }, 180_000);

  afterAll(async () => {
    await killAll(apps);
    await client?.dispose();
    for (const connection of direct.values()) connection.disconnect();
    await cluster?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('each process says it once naming the lost partitions and counts it; one reset re-registers their rows', async () => {
    expect(lost.length).toBeGreaterThan(0);
    expect(lost.length).toBeLessThan(PARTITIONS);
    const kept = keys.all().filter((n) => !lost.includes(n));
    const [goneKey, keptKey] = [keyIn(keys, lost), keyIn(keys, kept)];
    await client.schedule({ key: goneKey, handler: 'log', delay: '1h' });
    await client.schedule({ key: keptKey, handler: 'log', delay: '1h' });
    await waitFor(
      async () => (await Promise.all(fileKeys.map((key) => client.get(key)))).every(Boolean) || undefined,
      {
        what: 'the schedules-file rows to be registered',
      },
    );
    const victimRedis = direct.get(victim)!;
    // Every watch has read the victim's markers (a look's GETs; the markers were there before it started).
    await waitFor(
      async () => {
        const list = (await victimRedis.client('LIST')) as string;
        return (list.match(/name=sundial-watch .*cmd=get/g) ?? []).length >= WATCHES || undefined;
      },
      { timeoutMs: NOTICE_MS, what: "every watch to read the victim's markers" },
    );
    const events = new Redis(cluster.nodes.find((node) => node !== victim)!.url);
    const messages: string[] = [];
    await events.subscribe('sundial:events');
    events.on('message', (_channel: string, message: string) => messages.push(message));
    const epoch = await direct.get(await nodeOf(keys.dataMarker))!.get(keys.dataMarker);
    try {
      await victimRedis.flushall();

      const expected = `in partition${lost.length > 1 ? 's' : ''} ${lost.join(', ')} of ${PARTITIONS}`;
      for (const app of apps) {
        const [line] = await waitFor(
          () => (appLines(app, LOST).length > 0 ? appLines(app, LOST) : undefined),
          {
            timeoutMs: NOTICE_MS,
            what: `${app.name} to notice the shard's loss`,
          },
        );
        expect(line.level).toBe('error');
        expect(line.msg).toContain(`${LOST} under prefix 'sundial' ${expected}`);
        expect(line.msg).toContain('Every timer created before in them is gone');
        expect((line as unknown as { partitions: number[] }).partitions).toEqual(lost);
        expect(line.fix).toContain('appendonly yes');
        await waitFor(async () => (await lostMetric(app)) === '1', {
          timeoutMs: NOTICE_MS,
          what: `${app.name}'s sundial_redis_data_lost_total to be 1`,
        });
      }
      // The client-only process says it too, once, naming them.
      await waitFor(() => clientLines.some((line) => line.message.includes(LOST)) || undefined, {
        timeoutMs: NOTICE_MS,
        what: "the client to notice the shard's loss",
      });
      expect(clientLines.filter((line) => line.message.includes(LOST))).toEqual([
        {
          message: expect.stringContaining(`Sundial: ${LOST} under prefix 'sundial' ${expected}`),
          fields: expect.objectContaining({ partitions: lost }),
        },
      ]);
      // The rows of the lost partitions are registered again (the reset); the API timer there is gone,
      // the one on a shard that kept its data is not.
      await waitFor(
        async () => (await Promise.all(fileKeys.map((key) => client.get(key)))).every(Boolean) || undefined,
        {
          timeoutMs: NOTICE_MS,
          what: 'the schedules-file rows of the lost partitions to be registered again',
        },
      );
      expect(await client.get(goneKey)).toBeNull();
      expect(await client.get(keptKey)).not.toBeNull();
      expect(await direct.get(await nodeOf(keys.dataMarker))!.get(keys.dataMarker)).toBe(epoch);
      // a message published now arrives after any reset published so far
      await direct.get(victim)!.publish('sundial:events', 'end');
      await waitFor(() => messages.includes('end') || undefined, { what: 'the end message' });
      const resets = messages.filter((message) => message !== 'end' && JSON.parse(message).type === 'reset');
      expect(resets.map((message) => JSON.parse(message))).toEqual([
        expect.objectContaining({ type: 'reset', count: 0 }),
      ]);
      expect(apps.map((app) => appLines(app, LOST).length)).toEqual([1, 1]);
    } finally {
      events.disconnect();
    }
  }, 90_000);
});
