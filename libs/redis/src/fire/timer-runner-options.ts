import type { SundialLogger, TimerHandler } from '@sundial/core';
import type { PartitionedOptions } from '../infra/partitioned';
import type { ServeOptions } from '../infra/served-partitions';
import type { SundialObserver } from '../metrics/observer';
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
