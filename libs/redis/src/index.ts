// @sundial/redis — the public API. Named exports only: what is not listed here is internal.

// The Timers API over Redis (docs/spec.md §5.1) and where Redis is.
export { RedisTimers } from './client/redis-timers';
export type { RedisTimersOptions } from './client/redis-timers-options';
export type { DeclarationStep, DeclarationTurn } from './client/declaration-sets';
export { DEFAULT_COMMAND_TIMEOUT_MS } from './client/command-timeout';
export { CLOSE_REDIS_WAIT_MS, settledWithin } from './infra/settled-within';
export {
  closeRedis,
  followFailovers,
  namesCluster,
  openRedis,
  type RedisClient,
  type RedisConnection,
  withReconnectCadence,
} from './infra/connection';
export { connectionKeyPrefix } from './infra/key-prefix';
export { parseRedisUrl, type RedisTarget, urlForDisplay } from './infra/redis-url';
export type { PartitionedOptions } from './infra/partitioned';
export { type ServeOptions, servedPartitions } from './infra/served-partitions';
export type { DataLoss } from './infra/data-loss';
export {
  type PartitionCountWatch,
  reportDataLoss,
  reportWritesLost,
  watchPartitionCount,
} from './infra/layout-watch';
export type { WritesLost } from './infra/writes-lost';
export { ConnectionCause, type ConnectionErrorEvent, type ErrorEvents } from './infra/connection-cause';
export {
  isAwayNotRefused,
  START_REDIS_WAIT_MS,
  waitForRedis,
  type WaitForRedisOptions,
} from './infra/wait-for-redis';
export { sentinelRefusal } from './infra/sentinel-refusal';
export { checkKeyPrefix } from './store/key-prefix';
export { keySlot, MAX_PARTITIONS, type PartitionTags, SundialKeys } from './store/keys';

// The fire path: the scheduler's dispatcher and reconciler, the worker's TimerRunner, and their defaults.
export { Dispatcher, type DispatcherOptions } from './fire/dispatcher';
export {
  repartition,
  type RepartitionOptions,
  type RepartitionProgress,
  type RepartitionResult,
} from './repartition/repartition';
export { Reconciler, type ReconcilerOptions } from './fire/reconciler';
export { DEFAULT_CLOSE_GRACE_MS, TimerRunner, type TimerRunnerOptions } from './fire/timer-runner';
export { RUN_TIMING_CHANNEL, type RunTiming } from './fire/run-timing';
export { claimAheadOf, DEFAULT_CLAIM_AHEAD_MS, MAX_CLAIM_AHEAD_MS } from './fire/claim-ahead';
export { DEFAULT_DISPATCHER_GRACE_MS, dispatcherGraceOf } from './fire/dispatcher-presence';
export { DEFAULT_CONSUMER_STALL_MS } from './fire/consumer-watchdog';
// Defaults kept apart from the ioredis and BullMQ files that use them (option-defaults.ts: the apps read
// their environments without loading those).
export {
  DEFAULT_CONCURRENCY,
  DEFAULT_LAYOUT_WATCH_MS,
  DEFAULT_LEASE_MS,
  DEFAULT_RECONCILE_MS,
} from './option-defaults';
export {
  type FireConsumerOptions,
  type FireConsumersMode,
  type FireJobConsumer,
  fireConsumerOptions,
} from './fire/fire-consumer';

// Metrics (docs/spec.md §6): what the classes report (one typed map), and the Prometheus side of it.
export {
  type FinishedRun,
  type RunStatus,
  type ReconcileCounts,
  type UnansweredRun,
  type SundialObserver,
  type SundialObserverEvents,
} from './metrics/observer';
export type { StaleReason } from './store/replies';
export { Backlog, type BacklogOptions } from './metrics/backlog';
export { type BacklogSource, SundialMetrics } from './metrics/sundial-metrics';

// Whether a string is an id this backend writes (`<seq>p<partition>`): HTTP's GET /v1/registry/:id.
export { isTimerId } from './store/live-ids';
// Internals the Redis test suites drive directly (scripts, fire commands, cron follow-ups); not for apps.
export { claimCopy, cronDetach, cronFollowUp } from './fire/completion';
export { type Completion, FireCommands, type FireJobData, type TimerRef } from './store/fire-commands';
export { migrateLiveIds } from './store/live-ids-migration';
export {
  defineCommands,
  loadFunctions,
  runScript,
  type ScriptName,
  scriptOfCall,
} from './store/script-loader';

// How @sundial/client's fire queues and workers log their connections' errors (docs/spec.md §5.5).
export { type ErrorLog, type ErrorSource, ErrorThrottle, throttleErrors } from './infra/error-throttle';
export { FireWorkerErrors, type FireWorkerLog } from './fire/fire-worker-errors';
