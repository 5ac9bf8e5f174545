// Narrow imports, not @sundial/redis's and @sundial/server's indexes (Nest, BullMQ, ioredis): main.ts reads
// the environment before it loads them, so that a refused start fails fast (test/deploy/bad-env.test.ts).
import {
  claimAheadOf,
  DEFAULT_CLAIM_AHEAD_MS,
  DEFAULT_CLOSE_GRACE_MS,
  DEFAULT_CONCURRENCY,
  DEFAULT_CONSUMER_STALL_MS,
  DEFAULT_DISPATCHER_GRACE_MS,
  DEFAULT_LEASE_MS,
  dispatcherGraceOf,
} from '../../../libs/redis/src/option-defaults';
import { type AllowedHosts, allowedHostsFromEnv } from '../../../libs/server/src/allowed-hosts';
import { type ClusterConfig, clusterConfigFromEnv } from '../../../libs/server/src/cluster-config';
import { type Env, envInt, envList, envOptional, MAX_ENV_INT, MAX_PORT } from '../../../libs/server/src/env';
import { checkAllowEntries } from './handlers/allow-list';

/**
 * What the worker allows itself past its shutdown grace to abort and hand back its runs (main.ts: the
 * process's shutdown deadline is the grace plus this).
 */
export const HAND_BACK_MS = 15_000;

export interface WorkerConfig extends ClusterConfig {
  /** HTTP port of /health and /metrics (default 3001, beside the scheduler's 3000) */
  port: number;
  /** SUNDIAL_ALLOWED_HOSTS: the names a request's `Host` may give besides IPs, localhost, single labels */
  allowedHosts: AllowedHosts;
  /** jobs run at once per partition queue */
  concurrency: number;
  /** hosts (`host` or `host:port`) the built-in `http` handler may call */
  httpAllow: string[];
  /** on SIGTERM, how long running handlers may go on before their signal aborts */
  shutdownGraceMs: number;
  /** a module whose `handlers` export adds handlers to the built-in ones */
  handlersModule?: string;
  /** how long a claim outlives a silent (dead) worker before its run is retried or recorded lost */
  leaseMs: number;
  /** a partition's fire-job consumer that took no job this long while jobs waited longer is made anew */
  consumerStallMs: number;
  /** how long before a timer's due its claim goes (docs/spec.md §3.2) */
  claimAheadMs: number;
  /** how long the runner lets pass with a partition no dispatcher serves before it warns (docs/spec.md §4.2) */
  dispatcherGraceMs: number;
}

export function workerConfigFromEnv(env: Env = process.env): WorkerConfig {
  return {
    ...clusterConfigFromEnv(env),
    port: envInt(env, 'PORT', 3001, 0, MAX_PORT),
    // The worker takes no API token: unset, only the names always allowed.
    allowedHosts: allowedHostsFromEnv(env, false),
    concurrency: envInt(env, 'WORKER_CONCURRENCY', DEFAULT_CONCURRENCY, 1),
    // checked here, with the rest, as the http handler reads it (a bad entry is the start's refusal)
    httpAllow: checkAllowEntries(envList(env, 'SUNDIAL_HTTP_ALLOW')),
    // with the hand-back, the shutdown deadline (a Node timer) stays within the longest timer
    shutdownGraceMs: envInt(
      env,
      'SUNDIAL_SHUTDOWN_GRACE_MS',
      DEFAULT_CLOSE_GRACE_MS,
      0,
      MAX_ENV_INT - HAND_BACK_MS,
    ),
    leaseMs: envInt(env, 'SUNDIAL_LEASE_MS', DEFAULT_LEASE_MS, 100),
    consumerStallMs: envInt(env, 'SUNDIAL_CONSUMER_STALL_MS', DEFAULT_CONSUMER_STALL_MS, 100),
    // the bound (≤ 50) is the runner's own check, named after the variable
    claimAheadMs: claimAheadOf(
      envInt(env, 'SUNDIAL_CLAIM_AHEAD_MS', DEFAULT_CLAIM_AHEAD_MS),
      'SUNDIAL_CLAIM_AHEAD_MS',
    ),
    // the bound (≥ 300) is the runner's own check, named after the variable
    dispatcherGraceMs: dispatcherGraceOf(
      envInt(env, 'SUNDIAL_DISPATCHER_GRACE_MS', DEFAULT_DISPATCHER_GRACE_MS),
      'SUNDIAL_DISPATCHER_GRACE_MS',
    ),
    handlersModule: envOptional(env, 'SUNDIAL_HANDLERS_MODULE'),
  };
}
