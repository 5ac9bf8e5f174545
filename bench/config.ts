/** How big each scenario is. `--quick` shrinks them to about a minute in all; the report says which ran. */
export interface BenchSizes {
  mode: 'full' | 'quick';
  /** 1. one-shots scheduled, in batches of `batchSize` */
  scheduleCount: number;
  batchSize: number;
  /** 2. timers due per second, each rate held for `latenessWindowMs` */
  latenessRates: number[];
  latenessWindowMs: number;
  /** 3. timers fired per throughput run */
  throughputCount: number;
  /** 4. pending timers, and reschedule/cancel calls per second held for `churnWindowMs` */
  churnPending: number;
  churnOpsPerSecond: number;
  churnWindowMs: number;
  /** 5. pending timers measured */
  memoryCount: number;
  /** 6. timers under the cancelled scope */
  cancelAllCount: number;
  /** 7. timers fired between RESETSTAT and INFO commandstats */
  commandsCount: number;
  /** 8. Redis Cluster sizes (primaries) measured, none in a quick run; timers scheduled and fired on each */
  clusterPrimaries: number[];
  clusterCount: number;
  /** jobs each worker process runs at once, the same on both sides */
  concurrency: number;
}

export const FULL: BenchSizes = {
  mode: 'full',
  scheduleCount: 100_000,
  batchSize: 1_000,
  latenessRates: [100, 1_000, 5_000],
  latenessWindowMs: 10_000,
  throughputCount: 50_000,
  churnPending: 100_000,
  churnOpsPerSecond: 2_000,
  churnWindowMs: 10_000,
  memoryCount: 1_000_000,
  cancelAllCount: 100_000,
  commandsCount: 10_000,
  clusterPrimaries: [1, 2, 3],
  clusterCount: 20_000,
  concurrency: 100,
};

export const QUICK: BenchSizes = {
  ...FULL,
  mode: 'quick',
  scheduleCount: 10_000,
  latenessWindowMs: 1_500,
  throughputCount: 5_000,
  churnPending: 10_000,
  churnWindowMs: 2_000,
  memoryCount: 30_000,
  cancelAllCount: 10_000,
  commandsCount: 1_000,
  clusterPrimaries: [],
};
