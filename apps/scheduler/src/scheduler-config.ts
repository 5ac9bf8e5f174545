import { DEFAULT_LIMITS } from '@sundial/core';
// Narrow imports, not @sundial/redis's and @sundial/server's indexes (Nest, BullMQ, ioredis): main.ts reads
// the environment before it loads them, so that a refused start fails fast (test/deploy/bad-env.test.ts).
import { DEFAULT_RECONCILE_MS } from '../../../libs/redis/src/option-defaults';
import { type AllowedHosts, allowedHostsFromEnv } from '../../../libs/server/src/allowed-hosts';
import { type ClusterConfig, clusterConfigFromEnv } from '../../../libs/server/src/cluster-config';
import { type Env, envFlag, envInt, envOptional, MAX_PORT } from '../../../libs/server/src/env';

export interface SchedulerConfig extends ClusterConfig {
  port: number;
  /** when set, every `/v1` call needs `Authorization: Bearer <apiToken>` */
  apiToken?: string;
  /** SUNDIAL_ALLOWED_HOSTS: the names a request's `Host` may give besides IPs, localhost, single labels */
  allowedHosts: AllowedHosts;
  maxPayloadBytes: number;
  minEveryMs: number;
  reconcileMs: number;
  /** a schedules.yaml whose rows the scheduler keeps as timers (docs/spec.md §5.4) */
  schedulesFile?: string;
  /** SUNDIAL_CANCEL_ALL_RECORDS: the API's cancel by prefix through scope records (RedisTimers' cancelAllRecords) */
  cancelAllRecords: boolean;
}

export function schedulerConfigFromEnv(env: Env = process.env): SchedulerConfig {
  const apiToken = envOptional(env, 'SUNDIAL_API_TOKEN');
  return {
    ...clusterConfigFromEnv(env),
    port: envInt(env, 'PORT', 3000, 0, MAX_PORT),
    apiToken,
    allowedHosts: allowedHostsFromEnv(env, apiToken !== undefined),
    maxPayloadBytes: envInt(env, 'SUNDIAL_MAX_PAYLOAD_BYTES', DEFAULT_LIMITS.maxPayloadBytes, 1),
    minEveryMs: envInt(env, 'SUNDIAL_MIN_EVERY_MS', DEFAULT_LIMITS.minEveryMs, 1),
    reconcileMs: envInt(env, 'SUNDIAL_RECONCILE_MS', DEFAULT_RECONCILE_MS, 10),
    schedulesFile: envOptional(env, 'SUNDIAL_SCHEDULES_FILE'),
    cancelAllRecords: envFlag(env, 'SUNDIAL_CANCEL_ALL_RECORDS', false),
  };
}
