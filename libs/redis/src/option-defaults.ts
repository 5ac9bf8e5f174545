// The defaults of the options the apps read from their environment, and the library's own checks of
// them, import-light: no ioredis, no BullMQ. An app reads and checks its whole environment through this
// file (apps/*/src/*-config.ts, libs/server/src/cluster-config.ts) before it loads Nest, BullMQ and
// ioredis, so a refused start (a bad ConfigMap) fails in tens of milliseconds, not after some 900
// modules. The index exports the same names; a default kept here is the one its class falls back on.

/** How long a claim outlives a silent worker (SUNDIAL_LEASE_MS). */
export const DEFAULT_LEASE_MS = 30_000;
/** Fire jobs in flight per partition queue (WORKER_CONCURRENCY). */
export const DEFAULT_CONCURRENCY = 16;
/** How often the reconciler passes over each partition (SUNDIAL_RECONCILE_MS). */
export const DEFAULT_RECONCILE_MS = 5000;
/** How often a watch looks unless told (the apps' SUNDIAL_LAYOUT_WATCH_MS default). */
export const DEFAULT_LAYOUT_WATCH_MS = 5000;

export { DEFAULT_COMMAND_TIMEOUT_MS } from './client/command-timeout';
export { claimAheadOf, DEFAULT_CLAIM_AHEAD_MS } from './fire/claim-ahead';
export { DEFAULT_CLOSE_GRACE_MS } from './fire/close-waits';
export { DEFAULT_CONSUMER_STALL_MS } from './fire/consumer-watchdog';
export { DEFAULT_DISPATCHER_GRACE_MS, dispatcherGraceOf } from './fire/dispatcher-presence';
export { parseRedisUrl } from './infra/redis-url';
export { servedPartitions } from './infra/served-partitions';
export { checkKeyPrefix } from './store/key-prefix';
export { MAX_PARTITIONS } from './store/keys';
