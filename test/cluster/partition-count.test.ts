import {
  type AppProcess,
  clusterEnv,
  ensureBuilt,
  killAll,
  type RedisServer,
  spawnApp,
  startOrRefusal,
  startRedis,
} from '@sundial/testing';

/** A process started with another partition count than the data's refuses to start, saying how to fix it. */
describe('cluster: the partition count is part of the data', () => {
  let redis: RedisServer;
  const apps: AppProcess[] = [];

  beforeAll(async () => {
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
  }, 180_000);
  afterAll(async () => {
    await killAll(apps);
    await redis?.stop();
  });

  it('starts the first process, and refuses a worker with another SUNDIAL_PARTITIONS', async () => {
    apps.push(await spawnApp('scheduler', 'scheduler', clusterEnv(redis.url, { SUNDIAL_PARTITIONS: '2' })));
    const refused = await startOrRefusal(
      'worker',
      'worker',
      clusterEnv(redis.url, { SUNDIAL_PARTITIONS: '4' }),
      apps,
    );
    expect(refused).toContain('exited at start');
    expect(refused).toContain('spread over 2 partitions, and this process was started with 4');
    expect(refused).toContain('SUNDIAL_PARTITIONS=2');
    apps.push(await spawnApp('worker', 'worker-2', clusterEnv(redis.url, { SUNDIAL_PARTITIONS: '2' })));
  }, 60_000);
});
