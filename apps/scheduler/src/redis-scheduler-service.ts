import { Backlog, Dispatcher, Reconciler, RedisTimers, SundialMetrics } from '@sundial/redis';
import type { SchedulerServiceFactory } from './scheduler-service';

/**
 * The scheduler's app service: the Timers API over Redis, plus the dispatcher and reconciler of every
 * partition — each replica runs both, with no leader (docs/design.md "The fire path").
 */
export const createRedisSchedulerService: SchedulerServiceFactory = (config, logger) => {
  const shared = {
    connection: config.redisUrl,
    prefix: config.prefix,
    partitions: config.partitions,
    logger,
  };
  const metrics = new SundialMetrics();
  const timers = new RedisTimers({
    ...shared,
    observer: metrics,
    limits: { maxPayloadBytes: config.maxPayloadBytes, minEveryMs: config.minEveryMs },
  });
  const dispatcher = new Dispatcher(shared);
  const reconciler = new Reconciler({
    ...shared,
    intervalMs: config.reconcileMs,
    onPass: metrics.reconciled,
  });
  const backlog = new Backlog(shared);
  let untrackBacklog = (): void => undefined;
  return {
    timers,
    start: async () => {
      await timers.connect(); // warns at start when Redis may evict timers (docs/spec.md §4.1)
      await dispatcher.start();
      reconciler.start();
      untrackBacklog = metrics.trackBacklog(backlog);
    },
    stop: async () => {
      untrackBacklog();
      await backlog.close();
      await reconciler.close();
      await dispatcher.close();
      await timers.dispose();
    },
  };
};
