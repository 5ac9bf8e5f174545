import {
  clusterEnv,
  ensureBuilt,
  killAll,
  type AppProcess,
  type RedisServer,
  spawnApp,
  startRedis,
  waitFor,
} from '@sundial/testing/harness';

/**
 * docs/operations.md SundialRedisDown: a worker stopped while Redis is away (SIGTERM) still exits,
 * cleanly, within its grace and the runner's bounded wait for Redis: it drops its connections rather
 * than wait. The stock worker's BullMQ workers (@nestjs/bullmq processors) are closed once more by
 * @nestjs/bullmq at application shutdown, with no bound: before ioredis-disconnect.ts ended a client
 * between reconnects on disconnect(), that close never returned, and the worker was cut by its own
 * deadline (grace + 15 s) with exit code 1.
 */
describe('a worker stopped while Redis is away', () => {
  let redis: RedisServer;
  let worker: AppProcess | undefined;

  beforeAll(async () => {
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
  }, 180_000);

  afterAll(async () => {
    await killAll(worker ? [worker] : []);
    await redis?.stop();
  });

  it('exits 0 after its grace, not at its deadline', async () => {
    worker = await spawnApp(
      'worker',
      'worker',
      clusterEnv(redis.url, { SUNDIAL_PARTITIONS: '2', SUNDIAL_SHUTDOWN_GRACE_MS: '300' }),
    );
    redis.kill();
    const running = worker;
    await waitFor(async () => (await running.api('GET', '/health/ready')).status === 503, {
      what: 'the worker to see Redis gone',
    });
    worker.kill('SIGTERM');
    expect(await worker.exited).toEqual({ code: 0, signal: null });
  }, 60_000);
});
