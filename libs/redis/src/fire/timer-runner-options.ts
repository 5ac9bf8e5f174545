import { OptionReader, type SundialLogger, type TimerHandler } from '@sundial/core';
import type { PartitionedOptions } from '../infra/partitioned';
import { type ServeOptions, servedPartitions } from '../infra/served-partitions';
import type { SundialObserver } from '../metrics/observer';
import { claimAheadOf } from './claim-ahead';
import { dispatcherGraceOf } from './dispatcher-presence';
import type { FireConsumersMode } from './fire-consumer';

// Why a file of its own: the runner's options are its public surface; timer-runner.ts is what it does.

export interface TimerRunnerOptions extends PartitionedOptions, ServeOptions {
  /** handler name → function; a timer naming any other handler fails with reason 'unknown-handler' */
  handlers: Record<string, TimerHandler>;
  /** fire jobs in flight per partition queue (default 16); a job runs its batch's handlers together */
  concurrency?: number;
  /** how long a claim outlives a silent worker (default 30 s); renewed every leaseMs / 3 */
  leaseMs?: number;
  /** ms before a due its claim goes, its handler still starting at the due (0–50, default 5; 0: at the due) */
  claimAheadMs?: number;
  /** names this process on the leases it holds (default host-pid-random) */
  workerId?: string;
  /** lines about a timer carry key, id, version, partition, handler (default: JSON on the console) */
  logger?: SundialLogger;
  /** told runs, stale claims and completions, and skipped slots (metrics: SundialMetrics) */
  observer?: SundialObserver;
  /** who consumes the partition queues (default 'own'; see FireConsumersMode) */
  consumers?: FireConsumersMode;
  /** a consumer that took no job this long while jobs waited longer is made anew (default 30 s) */
  consumerStallMs?: number;
  /** with a partition no dispatcher serves this long while it runs, one warn line (default 15 s; docs/spec.md §4.2) */
  dispatcherGraceMs?: number;
}

/** What the runner's constructor takes of its options, each checked before any connection opens. */
export interface CheckedRunnerOptions {
  served: number[];
  claimAheadMs: number;
  dispatcherGraceMs: number;
}

/**
 * The runner's options checked (a bad one is the `invalid` refusal naming it, and changes nothing):
 * `leaseMs` and `consumerStallMs` become Node timers (BullMQ's lock renewal and stalled check, the lease
 * renewal, the watchdog), so neither may pass the longest one.
 */
export function checkRunnerOptions(options: TimerRunnerOptions): CheckedRunnerOptions {
  const read = OptionReader.of('TimerRunner', options, "{ connection: 'redis://127.0.0.1:6379', handlers }");
  read.timerMs('leaseMs', 1, '30000');
  read.timerMs('consumerStallMs', 1, '30000');
  return {
    served: servedPartitions(options),
    claimAheadMs: claimAheadOf(options.claimAheadMs),
    dispatcherGraceMs: dispatcherGraceOf(options.dispatcherGraceMs),
  };
}
