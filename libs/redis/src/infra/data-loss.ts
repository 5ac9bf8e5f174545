/** What a process noticed: data it saw under its prefix is gone (docs/operations.md "SundialRedisDataLost"). */
export interface DataLoss {
  prefix: string;
  /**
   * the partitions whose data is gone (their marker `P:{pN}:epoch` gone or replaced), ascending; empty when
   * none is lost (only `P:epoch`'s shard was)
   */
  partitions: number[];
  /** the partition count the data is stored with (`P:partitions`), which `partitions` are of */
  count: number;
  /** whether every partition's data is gone */
  all: boolean;
  /** when the lost data's marker was written (ms since the epoch): the first start on that data */
  since: number;
  /** the lost data's (first) marker (`<ms>-<random>`): names this loss, so a process tells it once */
  marker: string;
  message: string;
  fix: string;
  /**
   * whether this process published the `reset` event: it wrote the new marker of the first lost one it
   * found gone (its `SET NX` won); every other process that notices the same loss found that marker there
   * and publishes nothing
   */
  reset: boolean;
}

/** What a look found lost: `P:epoch` (the prefix's own keys' shard) and the partitions, and since when. */
export interface LostMarkers {
  prefix: string;
  partitions: number[];
  count: number;
  /** the lost markers' values, in look order (`P:epoch` first) */
  markers: string[];
  reset: boolean;
}

const CAUSE = 'restarted without persistence, was flushed, or failed over to an empty replica';
const FIX =
  // "the API" alone read as the HTTP API: an app's own reminders (Timers.schedule) are gone too.
  'restore Redis from a backup, or recreate from your own records the timers your code scheduled ' +
  "(Timers, RedisTimers) or the HTTP API created (timers.on('reset') tells your code when); turn on AOF " +
  '(appendonly yes, on every shard, docs/operations.md "Redis settings") so that a restart keeps them';

/** The one error line's message and fix for a loss (docs/spec.md §6.3 "Data loss"). */
export function dataLoss(lost: LostMarkers): DataLoss {
  const since = Math.min(...lost.markers.map((marker) => Number(marker.split('-')[0])));
  const { prefix, partitions, count } = lost;
  const all = partitions.length === count;
  const when = `first written ${new Date(since).toISOString()}`;
  const rows = '@DistributedCron, @DistributedInterval and schedules-file rows are registered again';
  let message: string;
  if (all) {
    message =
      `Redis lost Sundial's data under prefix '${prefix}' (${when}): it ${CAUSE}. ` +
      `Every timer created before is gone; ${rows}`;
  } else if (partitions.length > 0) {
    message =
      `Redis lost Sundial's data under prefix '${prefix}' in partition${partitions.length > 1 ? 's' : ''} ` +
      `${partitions.join(', ')} of ${count} (${when}): the Redis shard that holds them ${CAUSE}. ` +
      `Every timer created before in them is gone; ${rows}`;
  } else {
    message =
      `Redis lost Sundial's data under prefix '${prefix}' outside its partitions (${when}): the Redis shard ` +
      `that holds '${prefix}:partitions' and the request ids' pins ${CAUSE}. The timers are intact; ` +
      'a request id used before may now be used for another call without an idempotency-conflict';
  }
  return {
    prefix,
    partitions,
    count,
    all,
    since,
    marker: lost.markers[0],
    message,
    fix: FIX,
    reset: lost.reset,
  };
}
