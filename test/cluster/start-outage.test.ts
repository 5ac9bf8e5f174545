import { Redis } from 'ioredis';
import {
  type AppProcess,
  ensureBuilt,
  killAll,
  type RedisCluster,
  type RedisServer,
  spawnApp,
  startRedis,
  startRedisCluster,
  within,
} from '@sundial/testing/harness';

const WAIT_LINE = 'waiting up to 30000 ms for Redis before starting';

/**
 * Redis stays away until both apps said they wait for it, or this long (then the test fails on the
 * missing line, saying what the apps wrote). Not a fixed outage: on a loaded host (CI runs three suites at
 * once on 2 cores) an app took more than the 8 s that was to reach its first Redis attempt, and found
 * Redis back; at load 20-25 here, 27 s (loading its modules). Each app then waits up to 30 s for Redis
 * from its own first attempt, which the other's later line does not outlast by that much.
 */
const WAIT_LINES_DEADLINE_MS = 45_000; // deadline
/** to listen, and to be ready: the wait above, then a start (spawnApp's own 30 s would cut the wait short) */
const START_DEADLINE_MS = WAIT_LINES_DEADLINE_MS + 30_000; // deadline

/**
 * A scheduler and a worker started while their Redis is unreachable (redis-server killed with SIGKILL,
 * started again on its port once both said they wait for it), as a pod started during a Redis restart or failover. Before,
 * each exited 1 at its first command (`could not start`, `Redis is unreachable`) and Kubernetes would
 * have started it again only after its crash-loop back-off; now each waits for Redis (up to 30 s, not
 * listening meanwhile) and starts once it answers. Past the 30 s it still exits 1, saying why
 * (libs/redis/src/infra/wait-for-redis.spec.ts).
 */
describe('apps started while Redis is unreachable', () => {
  let server: RedisServer;
  let cluster: RedisCluster;
  let apps: AppProcess[] = [];

  beforeAll(async () => {
    [server, cluster] = await Promise.all([startRedis(), startRedisCluster(3), ensureBuilt()]);
  }, 180_000);

  afterAll(async () => {
    await killAll(apps);
    await Promise.all([server?.stop(), cluster?.stop()]);
  });

  it('start once Redis answers, without exiting', async () => {
    server.kill();
    const env = { REDIS_URL: server.url };
    const waiting = new Set<string>();
    let bothWaiting = () => undefined as void;
    const saidWaiting = new Promise<void>((resolve) => (bothWaiting = resolve));
    const onLine = (name: string) => (line: string) => {
      if (line.includes(WAIT_LINE) && waiting.add(name).size === 2) bothWaiting();
    };
    // the outage ends once both wait (a missing line fails below, with the apps' lines)
    const restarted = within(saidWaiting, WAIT_LINES_DEADLINE_MS, 'both wait lines')
      .catch(() => undefined)
      .then(() => server.restart(0));
    const [scheduler, worker] = await Promise.all([
      spawnApp('scheduler', 'scheduler', env, {
        onLine: onLine('scheduler'),
        startDeadlineMs: START_DEADLINE_MS,
      }),
      spawnApp('worker', 'worker', env, { onLine: onLine('worker'), startDeadlineMs: START_DEADLINE_MS }),
      restarted,
    ]);
    apps = [scheduler, worker];
    for (const app of apps) {
      const said = app.lines.some((line) => line.includes(WAIT_LINE));
      expect(said || `${app.name} did not say it waits for Redis:\n${app.lines.join('\n')}`).toBe(true);
      expect((await app.api('GET', '/health/ready')).status).toBe(200);
    }
    const created = await scheduler.api('POST', '/v1/timers', { key: 'after', handler: 'log', delay: 0 });
    expect(created.status).toBe(201);
  }, 120_000); // deadline: the apps' start above, then their checks

  it('a wrong password is not waited for: the app exits 1 at once, naming it', async () => {
    const admin = new Redis(server.url);
    await admin.call('ACL', 'SETUSER', 'someone', 'on', '>right', '~*', '&*', '+@all');
    await admin.quit();
    const url = `redis://someone:wrong@127.0.0.1:${server.port}`;
    // Before, it waited the whole 30 s and then said only that Redis did not answer. (Its first probe may
    // still log that it waits: the refused AUTH comes a moment after the connection's first failure.)
    const refused = await spawnApp('scheduler', 'scheduler', { REDIS_URL: url }).then(
      () => new Error('the scheduler started with a wrong password'),
      (error: Error) => error,
    );
    expect(refused.message).toMatch(/exited at start with 1/);
    expect(refused.message).toMatch(/WRONGPASS/);
    expect(refused.message).not.toMatch(/did not answer within/);
  }, 60_000);

  // On a Redis Cluster the refused AUTH shows only on the cluster's `node error` events (the cluster
  // itself says `Cluster isn't ready`): before the start gate heard them, the scheduler waited the whole
  // 30 s and then failed to listen.
  it('on a Redis Cluster too, a wrong password is not waited for', async () => {
    for (const node of cluster.nodes) {
      const admin = new Redis(node.url);
      await admin.call('ACL', 'SETUSER', 'someone', 'on', '>right', '~*', '&*', '+@all');
      await admin.quit();
    }
    const hosts = cluster.nodes.map((node) => `127.0.0.1:${node.port}`).join(',');
    const started = Date.now();
    const refused = await spawnApp('scheduler', 'scheduler', {
      REDIS_URL: `redis+cluster://someone:wrong@${hosts}`,
    }).then(
      () => new Error('the scheduler started with a wrong password'),
      (error: Error) => error,
    );
    expect(refused.message).toMatch(/exited at start with 1/);
    expect(refused.message).toMatch(/WRONGPASS/);
    expect(Date.now() - started).toBeLessThan(15_000);
  }, 60_000);
});
