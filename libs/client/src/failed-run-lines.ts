import type { SundialLogger, TimersApi } from '@sundial/core';

/**
 * The memory backend's `run failed` line (docs/spec.md §6.3): on Redis the worker writes it; the
 * in-memory engine only emits the `failed` event, so an app on `backend: 'memory'` or
 * `SundialTestingModule` saw a throwing `@DistributedCron` nowhere (`@nestjs/schedule` logs a throwing
 * `@Cron`). Written from the event, so it is the outcome as recorded (a run whose timer changed under it
 * is stale, not failed); the event carries no stack, so neither does the line.
 */
export function logFailedRuns(timers: TimersApi, logger: SundialLogger): void {
  timers.on('failed', ({ key, id, version, due, attempt, error }) => {
    logger.warn('run failed', { key, id, version, due, attempt, error });
  });
}
