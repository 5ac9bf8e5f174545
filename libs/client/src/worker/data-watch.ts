import { reportDataLoss, reportWritesLost, SundialMetrics, watchPartitionCount } from '@sundial/redis';
import { loggerOf } from '../nest-logger';
import type { RedisBackendOptions } from '../sundial-module-options';
import type { SundialWorkerModuleOptions } from './sundial-worker-options';

export const DATA_WATCH = Symbol('sundial:data-watch');

/** Starts watching; resolves the function that stops it once the first look is done. */
export type DataWatch = () => Promise<() => Promise<void>>;

/**
 * The watch the standalone scheduler and worker run (docs/spec.md §4.1), run by SundialWorkerModule so
 * that an app deployed without them notices Redis losing its data: at each (re)connect and every 5 s,
 * one error line (through the module's logger), `sundial_redis_data_lost_total` on the module's
 * `metricsRegistry`, and the `reset` that registers the @DistributedCron rows again.
 */
export function dataWatch(sundial: RedisBackendOptions, worker: SundialWorkerModuleOptions): DataWatch {
  const metrics = new SundialMetrics(worker.metricsRegistry); // the counter is exported at 0 from the boot
  const onDataLost = reportDataLoss(loggerOf(sundial), metrics);
  const onWritesLost = reportWritesLost(loggerOf(sundial), metrics);
  const { connection, prefix, partitions } = sundial;
  return () => watchPartitionCount({ connection, prefix, partitions, onDataLost, onWritesLost });
}
