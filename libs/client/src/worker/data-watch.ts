import { reportDataLoss, reportWritesLost, type SundialMetrics, watchPartitionCount } from '@sundial/redis';
import { loggerOf } from '../nest-logger';
import type { RedisBackendOptions } from '../sundial-module-options';

export const DATA_WATCH = Symbol('sundial:data-watch');

/** Starts watching; resolves the function that stops it once the first look is done. */
export type DataWatch = () => Promise<() => Promise<void>>;

/**
 * The watch the standalone scheduler and worker run (docs/spec.md §4.1), run by SundialWorkerModule so
 * that an app deployed without them notices Redis losing its data: at each (re)connect and every 5 s,
 * one error line (through the module's logger), `sundial_redis_data_lost_total` on the worker's
 * `metrics` (made at boot: the counter is exported at 0 from then), and the `reset` that registers the
 * @DistributedCron rows again.
 */
export function dataWatch(sundial: RedisBackendOptions, metrics: SundialMetrics): DataWatch {
  const onDataLost = reportDataLoss(loggerOf(sundial), metrics);
  const onWritesLost = reportWritesLost(loggerOf(sundial), metrics);
  const { connection, prefix, partitions } = sundial;
  return () => watchPartitionCount({ connection, prefix, partitions, onDataLost, onWritesLost });
}
