import { RedisTimers } from '@sundial/redis';
import { Redis } from 'ioredis';
import {
  type AppProcess,
  clusterEnv,
  ensureBuilt,
  killAll,
  readRuns,
  type RedisServer,
  spawnApp,
  spawnRefused,
  startRedis,
  waitFor,
} from '@sundial/testing/harness';

/**
 * Processes pinned to partitions (SUNDIAL_SERVE_PARTITIONS): a scheduler and a worker for partition 0, another
 * pair for partition 1. Every timer runs once, by the worker of its partition; a bad list stops a process.
 */
describe('cluster: processes serving a subset of the partitions', () => {
  let redis: RedisServer;
  let client: RedisTimers;
  let records: Redis;
  const apps: AppProcess[] = [];
  const pinned = (partition: number) => ({ SUNDIAL_SERVE_PARTITIONS: String(partition) });

  beforeAll(async () => {
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
    client = new RedisTimers({ connection: redis.url, partitions: 2 });
    records = new Redis(`${redis.url}/1`);
  }, 180_000);
  afterAll(async () => {
    await client?.dispose();
    records?.disconnect();
    await killAll(apps);
    await redis?.stop();
  });

  it('refuses to start a worker serving a partition that does not exist', async () => {
    const refused = await spawnRefused(
      'worker',
      'worker-bad',
      clusterEnv(redis.url, { SUNDIAL_SERVE_PARTITIONS: '0,2' }),
    );
    expect(refused).toContain('exited at start');
    expect(refused).toContain('SUNDIAL_SERVE_PARTITIONS names 2, which is not a partition');
  }, 60_000);

  it('runs every timer once, in the worker that serves its partition', async () => {
    const started = await Promise.all([
      spawnApp('scheduler', 'scheduler-0', clusterEnv(redis.url, pinned(0))),
      spawnApp('scheduler', 'scheduler-1', clusterEnv(redis.url, pinned(1))),
      spawnApp('worker', 'worker-0', clusterEnv(redis.url, pinned(0))),
      spawnApp('worker', 'worker-1', clusterEnv(redis.url, pinned(1))),
    ]);
    apps.push(...started);
    const workerOf = [started[2].pid, started[3].pid];
    const keys = Array.from({ length: 200 }, (_, i) => `pinned:${i}`);
    expect(new Set(keys.map((key) => client.keys.partitionOf(key)))).toEqual(new Set([0, 1]));
    await client.scheduleMany(keys.map((key, i) => ({ key, handler: 'record', delay: 500 + (i % 10) * 50 })));
    const runs = await waitFor(
      async () => {
        const all = (await readRuns(records)).filter((run) => run.event === 'started');
        return all.length >= keys.length && all;
      },
      { timeoutMs: 30_000, what: 'every run' },
    );
    expect(runs).toHaveLength(keys.length);
    expect(new Set(runs.map((run) => run.key)).size).toBe(keys.length);
    const misplaced = runs.filter((run) => run.pid !== workerOf[client.keys.partitionOf(run.key)]);
    expect(misplaced).toEqual([]);
  }, 60_000);
});
