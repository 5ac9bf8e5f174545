import { SundialMetrics, TimerRunner } from '@sundial/redis';
import type { WorkerServiceFactory } from './worker-service';

/** The worker's app service: TimerRunner's BullMQ workers over every partition queue. */
export const createRedisWorkerService: WorkerServiceFactory = (config, handlers, logger) => {
  const runner = new TimerRunner({
    connection: config.redisUrl,
    prefix: config.prefix,
    partitions: config.partitions,
    handlers,
    concurrency: config.concurrency,
    leaseMs: config.leaseMs,
    logger,
    observer: new SundialMetrics(),
  });
  return { start: () => runner.start(), stop: (graceMs) => runner.close(graceMs) };
};
