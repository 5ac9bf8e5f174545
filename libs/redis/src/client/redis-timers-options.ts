import type { SpecLimits, SundialLogger } from '@sundial/core';
import type { SundialObserver } from '../metrics/observer';
import type { PartitionedOptions } from '../infra/partitioned';

export interface RedisTimersOptions extends PartitionedOptions {
  limits?: SpecLimits; // default DEFAULT_LIMITS; setBy: where a refusal's fix says they are set
  /** How long a cancelled key stays cancelled for `ifExists: 'keep'` (default 7 days). */
  tombstoneMs?: number;
  /** Keys cancelled per Lua call by `cancelAll` (default 1000, a few ms of Redis): bounds how long one script holds Redis. */
  cancelBatch?: number;
  logger?: SundialLogger;
  /** told what this client scheduled and cancelled (metrics: SundialMetrics) */
  observer?: SundialObserver;
  /** How long a call's `requestId` is remembered (default 24 h): a retry within it answers as the first. */
  requestWindowMs?: number;
  /**
   * How long a call waits for each Redis reply (default 5000): past it the call answers `unavailable`,
   * a write's with `detail.code` 'outcome-unknown' (Redis may still run it once it answers again, if it was sent: nothing of it is sent after that answer).
   */
  commandTimeoutMs?: number;
}
