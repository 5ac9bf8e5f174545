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
} from '@sundial/testing';

/** Redis is away this long after the apps are spawned: before, they exited 1 within ~3 s of it. */
const OUTAGE_MS = 8_000;

/**
 * A scheduler and a worker started while their Redis is unreachable (redis-server killed with SIGKILL,
 * started again on its port OUTAGE_MS later), as a pod started during a Redis restart or failover. Before,
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
    const [scheduler, worker] = await Promise.all([
      spawnApp('scheduler', 'scheduler', env),
      spawnApp('worker', 'worker', env),
      server.restart(OUTAGE_MS),
    ]);
    apps = [scheduler, worker];
    for (const app of apps) {
      expect(
        app.lines.some((line) => line.includes('waiting up to 30000 ms for Redis before starting')),
      ).toBe(true);
      expect((await app.api('GET', '/health/ready')).status).toBe(200);
    }
    const created = await scheduler.api('POST', '/v1/timers', { key: 'after', handler: 'log', delay: 0 });
    expect(created.status).toBe(201);
  }, 60_000);

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
