import { readFileSync } from 'node:fs';
import { SundialKeys } from '@sundial/redis';
import {
  type AppProcess,
  ensureBuilt,
  killAll,
  type RedisCluster,
  spawnApp,
  startRedisCluster,
  waitFor,
} from '@sundial/testing/harness';

/** How long every node of the cluster stays down. */
const OUTAGE_MS = 15_000;
const PARTITIONS = 8;
/**
 * Generous bounds on what the scheduler may spend while its cluster is gone: before the fix its
 * cluster pub/sub connection re-selected a node without pause (a new connection per refused connect),
 * and the scheduler grew by ~130 MB and used ~25% of a core over such an outage.
 */
const MAX_RSS_GROWTH_BYTES = 40e6;
const MAX_CPU_SHARE = 0.12;
const CLOCK_TICK_MS = 10; // /proc/<pid>/stat counts CPU time in USER_HZ (100) ticks

/** RSS (bytes) and CPU time (ms, user + system) of a process, from /proc (Linux). */
function usage(pid: number): { rss: number; cpuMs: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const [utime, stime, rssPages] = [fields[11], fields[12], fields[21]].map(Number);
  return { rss: rssPages * 4096, cpuMs: (utime + stime) * CLOCK_TICK_MS };
}

/** `after-<n>` keys, at least one in each partition. */
function keysInEveryPartition(): string[] {
  const keys = new SundialKeys('sundial', PARTITIONS, 'spread');
  const byPartition = new Map<number, string>();
  for (let n = 0; byPartition.size < PARTITIONS; n++) {
    const partition = keys.partitionOf(`after-${n}`);
    if (!byPartition.has(partition)) byPartition.set(partition, `after-${n}`);
  }
  return [...byPartition.values()];
}

/**
 * Issue 12 §3 on a Redis Cluster: every node is shut down and started again 15 s later (no AOF: the
 * data is gone, the slot layout kept in nodes.conf). Meanwhile both apps' readiness reports the
 * outage, a call fails `unavailable` instead of hanging, and neither the scheduler nor the worker
 * spins or grows; once the nodes are back they serve again without a restart, in every partition (a
 * BullMQ worker whose blocking connection was re-made while the cluster still reported
 * `cluster_state:fail` took no job again: test/redis/cluster-connect.test.ts).
 */
describe('a scheduler and a worker whose Redis Cluster vanished', () => {
  let cluster: RedisCluster;
  let apps: AppProcess[] = [];
  let outage: Promise<unknown> | undefined;

  beforeAll(async () => {
    [cluster] = await Promise.all([startRedisCluster(3), ensureBuilt()]);
    const env = {
      REDIS_URL: cluster.url,
      SUNDIAL_PARTITIONS: String(PARTITIONS),
      SUNDIAL_RECONCILE_MS: '300',
    };
    apps = await Promise.all([spawnApp('scheduler', 'scheduler', env), spawnApp('worker', 'worker', env)]);
  }, 180_000);

  afterAll(async () => {
    await killAll(apps);
    await outage?.catch(() => undefined); // nodes started again before they are stopped for good
    await cluster?.stop();
  });

  it('reports the outage, refuses calls as unavailable, stays bounded, and serves again', async () => {
    const [scheduler, worker] = apps;
    const timer = { handler: 'log', delay: '1h' };
    expect((await scheduler.api('POST', '/v1/timers', { ...timer, key: 'before' })).status).toBe(201);

    outage = Promise.all(cluster.nodes.map((node) => node.restart(OUTAGE_MS)));
    for (const app of apps) {
      await waitFor(async () => (await app.api('GET', '/health/ready')).status === 503, {
        what: `${app.name}'s readiness to report the outage`,
      });
    }
    const from = { at: Date.now(), usage: apps.map((app) => usage(app.pid)) };
    const refused = await scheduler.api('POST', '/v1/timers', { ...timer, key: 'during' });
    expect(refused).toMatchObject({ status: 503, body: { error: { reason: 'unavailable' } } });
    const read = await scheduler.api('GET', '/v1/timers/before');
    expect(read).toMatchObject({ status: 503, body: { error: { reason: 'unavailable' } } });
    // Sample until just before the nodes come back.
    await waitFor(() => Date.now() - from.at >= OUTAGE_MS - 3_000, {
      timeoutMs: OUTAGE_MS,
      intervalMs: 250,
      what: 'the outage to go on',
    });
    const to = { at: Date.now(), usage: apps.map((app) => usage(app.pid)) };
    apps.forEach((app, i) => {
      const [before, after] = [from.usage[i], to.usage[i]];
      const cpuShare = (after.cpuMs - before.cpuMs) / (to.at - from.at);
      console.log(
        `${app.name} during a cluster outage: RSS ${(before.rss / 1e6).toFixed(0)} → ${(after.rss / 1e6).toFixed(0)} MB, CPU ${(cpuShare * 100).toFixed(1)}% of a core over ${to.at - from.at} ms`,
      );
      expect(after.rss - before.rss).toBeLessThan(MAX_RSS_GROWTH_BYTES);
      expect(cpuShare).toBeLessThan(MAX_CPU_SHARE);
    });

    await outage;
    for (const app of apps) {
      await waitFor(async () => (await app.api('GET', '/health/ready')).status === 200, {
        timeoutMs: 30_000,
        what: `${app.name}'s readiness once the nodes are back`,
      });
    }
    // Serves again: a timer scheduled now in each partition runs on the worker (its handler 'log' logs
    // the key). Each partition's queue has a BullMQ worker of its own, which must all take jobs again.
    const after = keysInEveryPartition();
    for (const key of after) {
      await waitFor(
        async () =>
          (await scheduler.api('POST', '/v1/timers', { handler: 'log', key, delay: '200ms' })).status === 201,
        { timeoutMs: 20_000, what: 'the scheduler to serve again' },
      );
    }
    const ran = (key: string) => worker.lines.some((line) => line.includes(`"key":"${key}"`));
    await waitFor(() => after.every(ran), {
      timeoutMs: 20_000,
      what: 'the worker to run the timers scheduled after the outage',
    }).catch((error: Error) => {
      throw new Error(`${error.message}; not run: ${after.filter((key) => !ran(key)).join(', ')}`);
    });
    // The nodes came back empty: each app says the timers are gone (docs/spec.md §4.1), once.
    const lost = (app: AppProcess) => app.lines.filter((line) => line.includes("Redis lost Sundial's data"));
    for (const app of apps) {
      await waitFor(() => lost(app).length > 0, {
        timeoutMs: 20_000,
        what: `${app.name} to say the data is lost`,
      });
    }
    expect(apps.map((app) => lost(app).length)).toEqual([1, 1]);
  }, 120_000);
});
