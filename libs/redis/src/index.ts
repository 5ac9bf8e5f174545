// @sundial/redis — the public API. Named exports only: what is not listed here is internal.

// The Timers API over Redis (SPEC §5.1) and where Redis is.
export { RedisTimers, type RedisTimersObserver, type RedisTimersOptions } from './client/redis-timers';
export type { RedisConnection } from './infra/connection';
export type { PartitionedOptions } from './infra/partitioned';
export { SundialKeys } from './store/keys';

// The fire path: the scheduler's dispatcher and reconciler, the worker's TimerRunner, and their defaults.
export { Dispatcher, type DispatcherLogger, type DispatcherOptions } from './fire/dispatcher';
export {
  DEFAULT_RECONCILE_MS,
  type ReconcileCounts,
  Reconciler,
  type ReconcilerLogger,
  type ReconcilerOptions,
} from './fire/reconciler';
export {
  DEFAULT_CLOSE_GRACE_MS,
  DEFAULT_CONCURRENCY,
  DEFAULT_LEASE_MS,
  type FinishedRun,
  TimerRunner,
  type TimerRunnerLogger,
  type TimerRunnerObserver,
  type TimerRunnerOptions,
} from './fire/timer-runner';

// Metrics (SPEC §6).
export { Backlog, type BacklogOptions } from './metrics/backlog';
export { type BacklogSource, SundialMetrics } from './metrics/sundial-metrics';

// Internals the Redis test suites drive directly (scripts, fire commands, cron follow-ups); not for apps.
export { cronFollowUp } from './fire/completion';
export { FireCommands, type FireJobData, type TimerRef } from './store/fire-commands';
export { defineCommands, loadCommands, runScript, type ScriptName } from './store/script-loader';
