import type { Rewound } from './rewind';

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
  /**
   * whether the data went back in time (restored from an older backup: a counter that only grows read below a value seen)
   * rather than gone: `marker` is then `rewound:<the restore's name>`
   */
  rewound: boolean;
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
    rewound: false,
  };
}

/** What a look found of a restore (rewind.ts): the prefix, its count and since when its data is. */
export interface RewoundData {
  prefix: string;
  count: number;
  /** when `P:epoch` was first written: the first start on this data */
  since: number;
  rewound: Rewound;
  reset: boolean;
}

/**
 * The one error line of Redis gone back in time (docs/spec.md §4.1 "went back in time"): told as a loss
 * (`sundial_redis_data_lost_total`, alert SundialRedisDataLost) of every partition's writes since the
 * backup, named by the restore (`rewound:<name>`) so that a process tells it once.
 */
export function dataRewound({ prefix, count, since, rewound, reset }: RewoundData): DataLoss {
  const message =
    `Redis went back in time under prefix '${prefix}': '${rewound.counter}' reads ${rewound.read}, below ` +
    `the ${rewound.seen} this process saw — it was restored from an older backup (RDB or AOF), or failed ` +
    'over to a replica that lacked recent writes. Every write since that copy is undone: timers cancelled, ' +
    'paused or rescheduled since are as they were, one-shots that ran since are pending and run again, ' +
    'timers created since are gone; @DistributedCron, @DistributedInterval and schedules-file rows are ' +
    'registered again';
  const fix =
    'cancel (sundial cancel <key>) what must not run again and recreate from your own records the timers ' +
    'created since the backup; docs/operations.md "Restoring Redis from a backup"';
  const partitions = Array.from({ length: count }, (_, n) => n);
  const marker = `rewound:${rewound.name}`;
  return { prefix, partitions, count, all: true, since, marker, message, fix, reset, rewound: true };
}
