export * from './sundial-module-options';
export { SUNDIAL_MODULE_OPTIONS } from './sundial.module-definition';
export * from './sundial.module';
export * from './timers';
export * from './decorators/on-timer.decorator';
export * from './decorators/distributed-cron.decorator';
export * from './decorators/distributed-interval.decorator';
export {
  TimerHandlerRegistry,
  type DiscoveredCron,
  type DiscoveredInterval,
  type DiscoveredRow,
} from './handler-registry';
export { CronRegistrar } from './cron/cron-registrar';
export {
  CRON_KEY_PREFIX,
  CRON_OWNER_MARKER,
  cronKey,
  INTERVAL_KEY_PREFIX,
  INTERVAL_OWNER_MARKER,
  intervalKey,
} from './cron/cron-rows';
export * from './worker/sundial-worker-options';
export { SundialWorker } from './worker/sundial-worker';
export { SundialWorkerModule } from './worker/sundial-worker.module';
export { SundialHealthIndicator } from './health/sundial-health.indicator';
export { SundialHealthModule } from './health/sundial-health.module';
export { SundialErrorFilter } from './http/sundial-error.filter';
export { nestSundialLogger } from './nest-logger';
// The metrics of docs/spec.md §6, for a host that serves its own registry.
export { SundialMetrics } from '@sundial/redis';
