import type { ClusterConfig } from '../../shared/src/cluster-config';
import { clusterConfigFromEnv } from '../../shared/src/cluster-config';
import type { Env } from '../../shared/src/env';
import { envInt, envOptional } from '../../shared/src/env';

export interface SchedulerConfig extends ClusterConfig {
  port: number;
  /** when set, every `/v1` call needs `Authorization: Bearer <apiToken>` */
  apiToken?: string;
  maxPayloadBytes: number;
  minEveryMs: number;
  reconcileMs: number;
}

export function schedulerConfigFromEnv(env: Env = process.env): SchedulerConfig {
  return {
    ...clusterConfigFromEnv(env),
    port: envInt(env, 'PORT', 3000),
    apiToken: envOptional(env, 'SUNDIAL_API_TOKEN'),
    maxPayloadBytes: envInt(env, 'SUNDIAL_MAX_PAYLOAD_BYTES', 65_536, 1),
    minEveryMs: envInt(env, 'SUNDIAL_MIN_EVERY_MS', 100, 1),
    reconcileMs: envInt(env, 'SUNDIAL_RECONCILE_MS', 5_000, 10),
  };
}
