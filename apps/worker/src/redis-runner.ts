import { SundialMetrics, TimerRunner } from '@sundial/redis';
import type { WorkerBackendFactory } from './worker-backend';

/** Production backend: TimerRunner's BullMQ workers over every partition queue. */
export const createRedisRunner: WorkerBackendFactory = (config, handlers, logger) => {
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
