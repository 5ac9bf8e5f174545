import { ENV_LIMIT_SETTINGS } from '@sundial/core';
import { Backlog, Dispatcher, Reconciler, RedisTimers, SundialMetrics } from '@sundial/redis';
import type { SchedulerServiceFactory } from './scheduler-service';
import { SchedulesFollower } from './schedules/schedules-follower';
import { SchedulesFileMetrics } from './schedules/schedules-metrics';

/**
 * The scheduler's app service: the Timers API over Redis (every partition), plus the dispatcher and
 * reconciler of the partitions it serves (SUNDIAL_SERVE_PARTITIONS, default all) — each replica runs
 * both, with no leader (docs/design.md "The fire path") — and, with
 * SUNDIAL_SCHEDULES_FILE, the follower of that file (every replica follows it; their writes converge).
 */
export const createRedisSchedulerService: SchedulerServiceFactory = (config, logger) => {
  const shared = {
    connection: config.redisUrl,
    prefix: config.prefix,
    partitions: config.partitions,
    logger,
  };
  const metrics = new SundialMetrics();
  // set by the environment here: a refusal's fix names SUNDIAL_MAX_PAYLOAD_BYTES, not a library option
  const limits = {
    maxPayloadBytes: config.maxPayloadBytes,
    minEveryMs: config.minEveryMs,
    setBy: ENV_LIMIT_SETTINGS,
  };
  const { commandTimeoutMs, cancelAllRecords } = config;
  const timers = new RedisTimers({
    ...shared,
    observer: metrics,
    limits,
    commandTimeoutMs,
    cancelAllRecords,
  });
  const follower =
    config.schedulesFile === undefined
      ? undefined
      : new SchedulesFollower({
          path: config.schedulesFile,
          timers,
          limits,
          logger,
          onStatus: new SchedulesFileMetrics().update,
        });
  const dispatcher = new Dispatcher({ ...shared, serve: config.serve });
  const reconciler = new Reconciler({
    ...shared,
    serve: config.serve,
    intervalMs: config.reconcileMs,
    observer: metrics,
  });
  const backlog = new Backlog(shared);
  let untrackBacklog = (): void => undefined;
  return {
    timers,
    // the dispatcher measures Redis's clock every 60 s (the client only at its start)
    now: () => dispatcher.redisNow(),
    start: async () => {
      await timers.connect(); // warns at start when Redis may evict timers (docs/spec.md §4.1)
      await dispatcher.start();
      reconciler.start();
      untrackBacklog = metrics.trackBacklog(backlog);
      await follower?.start();
    },
    stop: async () => {
      await follower?.stop();
      untrackBacklog();
      await backlog.close();
      // each waits at most ~5 s for a Redis that does not answer (a frozen one): side by side, within the 15 s cap
      await Promise.all([reconciler.close(), dispatcher.close()]);
      await timers.dispose();
    },
  };
};
