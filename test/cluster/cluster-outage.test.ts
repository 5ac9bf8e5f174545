import { readFileSync } from 'node:fs';
import {
  type AppProcess,
  ensureBuilt,
  killAll,
  type RedisCluster,
  spawnApp,
  startRedisCluster,
  waitFor,
} from '@sundial/testing';

/** How long every node of the cluster stays down. */
const OUTAGE_MS = 15_000;
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

/**
 * Issue 12 §3 on a Redis Cluster: every node is shut down and started again 15 s later (no AOF: the
 * data is gone, the slot layout kept in nodes.conf). Meanwhile readiness reports the outage, a call
 * fails `unavailable` instead of hanging, and the scheduler neither spins nor grows; once the nodes
 * are back it serves again without a restart.
 */
describe('a scheduler whose Redis Cluster vanished', () => {
  let cluster: RedisCluster;
  let apps: AppProcess[] = [];

  beforeAll(async () => {
    [cluster] = await Promise.all([startRedisCluster(3), ensureBuilt()]);
    const env = { REDIS_URL: cluster.url, SUNDIAL_PARTITIONS: '8', SUNDIAL_RECONCILE_MS: '300' };
    apps = [await spawnApp('scheduler', 'scheduler', env)];
  }, 180_000);

  afterAll(async () => {
    await killAll(apps);
    await cluster?.stop();
  });

  it('reports the outage, refuses calls as unavailable, stays bounded, and serves again', async () => {
    const [scheduler] = apps;
    const timer = { handler: 'log', delay: '1h' };
    expect((await scheduler.api('POST', '/v1/timers', { ...timer, key: 'before' })).status).toBe(201);

    const outage = Promise.all(cluster.nodes.map((node) => node.restart(OUTAGE_MS)));
    await waitFor(async () => (await scheduler.api('GET', '/health/ready')).status === 503, {
      what: 'readiness to report the outage',
    });
    const from = { at: Date.now(), ...usage(scheduler.pid) };
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
    const to = { at: Date.now(), ...usage(scheduler.pid) };
    const cpuShare = (to.cpuMs - from.cpuMs) / (to.at - from.at);
    console.log(
      `cluster outage: RSS ${(from.rss / 1e6).toFixed(0)} → ${(to.rss / 1e6).toFixed(0)} MB, CPU ${(cpuShare * 100).toFixed(1)}% of a core over ${to.at - from.at} ms`,
    );
    expect(to.rss - from.rss).toBeLessThan(MAX_RSS_GROWTH_BYTES);
    expect(cpuShare).toBeLessThan(MAX_CPU_SHARE);

    await outage;
    await waitFor(async () => (await scheduler.api('GET', '/health/ready')).status === 200, {
      timeoutMs: 30_000,
      what: 'readiness once the nodes are back',
    });
    const after = await waitFor(
      async () => {
        const reply = await scheduler.api('POST', '/v1/timers', { ...timer, key: 'after' });
        return reply.status === 201 && reply;
      },
      { timeoutMs: 20_000, what: 'the scheduler to serve again' },
    );
    expect(after.body).toMatchObject({ key: 'after', status: 'pending' });
  }, 120_000);
});
