/**
 * What a process noticed: the primary it now talks to was promoted from a replica that had not received
 * everything the old primary had acknowledged (docs/operations.md "SundialRedisWritesLost").
 */
export interface WritesLost {
  prefix: string;
  /** the old primary's replication id and the offset where the new primary's history forked from it */
  fork: string;
  /** bytes of the old primary's replication stream past the fork that this process saw: a lower bound */
  bytes: number;
  /**
   * keys changed on the old primary (its `rdb_changes_since_last_save`) from this process's last look
   * that the new primary had, to its last look there (or to the old primary's last answer): an upper
   * bound on the writes lost among those seen; null when it cannot be told (a save reset the count)
   */
  changes: number | null;
  /** from when writes may be lost: the last look whose offset the new primary holds (ms since the epoch) */
  since: number;
  /** where the old primary was last seen with the lost writes (ms since the epoch) */
  until: number;
  /** the old primary's address, as this process reached it */
  primary: string;
  message: string;
  fix: string;
}

const FIX =
  'look for the timers changed in that window (the API, the run history) and redo what is missing; ' +
  "make such a loss rarer: min-replicas-to-write 1 and min-replicas-max-lag on Redis's primaries " +
  '(docs/operations.md "SundialRedisWritesLost")';

/** The one error line's message and fix for a loss (docs/spec.md §6.3 "Writes lost in a failover"). */
export function writesLost(lost: Omit<WritesLost, 'message' | 'fix'>): WritesLost {
  const { prefix, bytes, changes, since, until, primary } = lost;
  const count = changes === null ? '' : `up to ${changes} key change${changes === 1 ? '' : 's'}, `;
  const message =
    `Redis lost writes acknowledged to Sundial under prefix '${prefix}': the primary it now uses was ` +
    `promoted from a replica that lagged behind the old primary (${primary}), which had ${bytes} bytes ` +
    `more of history (${count}acknowledged between ${new Date(since).toISOString()} and ` +
    `${new Date(until).toISOString()}, or later). Timers scheduled, changed or cancelled then, and run ` +
    'outcomes recorded then, may be missing or as before; which ones cannot be named. ' +
    '@DistributedCron and schedules-file rows are registered again';
  return { ...lost, message, fix: FIX };
}
