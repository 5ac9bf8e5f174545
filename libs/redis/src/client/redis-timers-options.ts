import { OptionReader, refusals, type SpecLimits, type SundialLogger } from '@sundial/core';
import { connectionKeyPrefix } from '../infra/key-prefix';
import type { PartitionedOptions } from '../infra/partitioned';
import type { SundialObserver } from '../metrics/observer';

/** What a `RedisTimers` client is made with (docs/spec.md §5.5). */
export interface RedisTimersOptions extends PartitionedOptions {
  limits?: SpecLimits; // default DEFAULT_LIMITS; setBy: where a refusal's fix says they are set
  /** How long a cancelled key stays cancelled for `ifExists: 'keep'` (default 7 days). */
  tombstoneMs?: number;
  /** Keys cancelled per Lua call by `cancelAll` (default 1000, a few ms of Redis): bounds how long one script holds Redis. */
  cancelBatch?: number;
  /**
   * `cancelAll` writes a scope record per partition and answers once its keys are marked (their count,
   * the running ones cancelled); the rest is settled after (docs/design.md "The cancelAll scope record").
   * Default false. Turn it on only once every process on this Redis runs a release that applies records.
   */
  cancelAllRecords?: boolean;
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

/**
 * The options only RedisTimers reads, checked before its connection opens (`limits` as SundialModule and
 * the engine check them: a minEveryMs of 0 or -1 was taken as given).
 * Redis takes none but whole
 * numbers of ms: a `requestWindowMs` of 0 or 1.5 failed every write with a requestId with Redis's own
 * "ERR invalid expire time", and a `tombstoneMs` of 1.5 failed each cancel half done, the script's writes
 * before the error kept.
 */
export function checkTimersOptions(options: RedisTimersOptions): RedisTimersOptions {
  const read = OptionReader.of('RedisTimers', options, "{ connection: 'redis://127.0.0.1:6379' }");
  read.integer('tombstoneMs', 0, '604800000 (7 days)');
  read.integer('requestWindowMs', 1, '86400000 (24 h)');
  read.integer('cancelBatch', 1, '1000');
  read.boolean('cancelAllRecords');
  read.limits(['setBy']);
  const keyPrefix = connectionKeyPrefix(options.connection);
  if (keyPrefix !== undefined) {
    const prefix = options.prefix ?? 'sundial';
    throw refusals.invalid(
      'connection.keyPrefix',
      `RedisTimers: connection has ioredis keyPrefix ${JSON.stringify(keyPrefix)}: its timers would go under ${JSON.stringify(`${keyPrefix}${prefix}:`)}, where the scheduler and workers, which connect without it, never look (BullMQ, which carries the fire jobs, refuses such a connection).`,
      `Give RedisTimers a connection without keyPrefix (a URL or options, not a client made for the app's own keys) and name the keys with prefix: ${JSON.stringify(`${keyPrefix}${prefix}`)} (the same SUNDIAL_PREFIX to the apps).`,
    );
  }
  return options;
}
