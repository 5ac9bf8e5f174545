import { parseRedisUrl } from '@sundial/redis';
import type { Env } from './env';
import { envInt, envString } from './env';
import { type LogLevelName, parseLogLevel } from './pino-logger';

/** What every Sundial process reads from the environment (docs/spec.md §5.4). */
export interface ClusterConfig {
  redisUrl: string;
  prefix: string;
  partitions: number;
  logLevel: LogLevelName;
}

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export function clusterConfigFromEnv(env: Env): ClusterConfig {
  const redisUrl = envString(env, 'REDIS_URL', DEFAULT_REDIS_URL);
  try {
    parseRedisUrl(redisUrl); // a malformed URL stops the process at start, saying what to write
  } catch (error) {
    const { message, fix } = error as { message: string; fix: string };
    throw new Error(`REDIS_URL: ${message} ${fix}`, { cause: error });
  }
  return {
    redisUrl,
    prefix: envString(env, 'SUNDIAL_PREFIX', 'sundial'),
    partitions: envInt(env, 'SUNDIAL_PARTITIONS', 1, 1),
    logLevel: parseLogLevel(env.LOG_LEVEL),
  };
}
