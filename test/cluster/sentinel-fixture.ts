import { Redis } from 'ioredis';
import {
  type AppProcess,
  clusterEnv,
  ensureBuilt,
  killAll,
  type RedisSentinels,
  spawnCluster,
  startRedis,
  startRedisSentinels,
} from '@sundial/testing/harness';

/** A Sentinel group, a Redis for the runs' records, and one scheduler and `workers` workers on it. */
export interface SentinelApps {
  redis: RedisSentinels;
  apps: AppProcess[];
  /** the Redis the `record` handler writes its runs to (readRuns) */
  recordsClient: Redis;
  stop(): Promise<void>;
}

/** Starts them, the apps with `SUNDIAL_LEASE_MS` = `leaseMs` (short: runs left to their lease come back soon). */
export async function startSentinelApps(workers: number, leaseMs: number): Promise<SentinelApps> {
  const [redis, records] = await Promise.all([startRedisSentinels(), startRedis(), ensureBuilt()]);
  const env = clusterEnv(redis.url, {
    SUNDIAL_TEST_RECORD_URL: records.url,
    SUNDIAL_LEASE_MS: String(leaseMs),
  });
  const cluster = await spawnCluster(env, 1, workers);
  const apps = [...cluster.schedulers, ...cluster.workers];
  const recordsClient = new Redis(records.url);
  return {
    redis,
    apps,
    recordsClient,
    async stop() {
      recordsClient.disconnect();
      await killAll(apps);
      await Promise.all([redis.stop(), records.stop()]);
    },
  };
}
