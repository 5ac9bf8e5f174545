import type { SundialLogger } from '@sundial/core';
import type { ClusterClock } from '../infra/cluster-clock';
import type { RedisClient } from '../infra/connection';
import { partitionRanges } from '../infra/served-partitions';
import type { SundialKeys } from '../store/keys';
import { ANNOUNCE_EVERY_MS, ANNOUNCED_FOR_MS, servedBy } from './dispatcher-presence';
import type { FireConsumersMode } from './fire-consumer';

// Why a file of its own: the runners' side of dispatcher-presence.ts — which partitions of the prefix no
// dispatcher serves, said once, and worded for where the runner runs (docs/spec.md §4.2).

/** How often a runner looks: one ZRANGE, at the cadence of the apps' layout watch. */
const LOOK_EVERY_MS = 5_000;

/**
 * A look Redis answered this late (or not at all) means Redis was not answering (down, frozen, stalled):
 * the dispatchers' renewals waited too, so their announcements may have expired meanwhile. No partition is
 * said unserved until Redis has answered long enough for every running dispatcher to announce again
 * (two of its periods): a Redis frozen past an announcement's 15 s made the runner warn that no dispatcher
 * ran, with one running all along.
 */
const LATE_LOOK_MS = 1_000;
const SETTLE_MS = 2 * ANNOUNCE_EVERY_MS;
/**
 * An announcement the last look read as lasting past now (by more than the processes' clock estimates
 * may differ) that this look does not find was not outlived: `P:dispatchers` was written back — Redis
 * restored from an older backup (its members carry the backup's old ends, or the key is gone), a data
 * loss, a flush. The dispatchers running announce again within ANNOUNCE_EVERY_MS: SETTLE_MS as well.
 */
const CLOCK_SLACK_MS = 1_000;

/** Who feeds the runner: the Nest module (`external`: apps/worker, an app's SundialWorkerModule) or itself. */
type PresenceContext = FireConsumersMode;

export interface PresenceWatchOptions {
  redis: RedisClient;
  keys: SundialKeys;
  clock: ClusterClock;
  logger: SundialLogger;
  /** what the warn line tells to do is worded for it */
  context: PresenceContext;
  /** dispatcherGraceOf's; the looks come every third of it, at most every 5 s */
  graceMs: number;
  fields?: Record<string, unknown>;
}

/**
 * The runner's side: from its start, every 5 s, one `ZRANGE P:dispatchers <now> +inf BYSCORE` (the
 * announcements still lasting), whose members' partitions together are those served. Every partition
 * of the prefix is looked at, not only the runner's own `serve`: a partition with no dispatcher is stuck
 * whoever consumes it. Once the runner has run for the grace, a set of unserved partitions not said yet
 * is said (one warn line: the prefix, the partitions, the fix); all served again after that: one info
 * line. A failed look (Redis away) says nothing, and no partition is said unserved for a while after one,
 * after a late one, or after one that misses an announcement not yet run out (SETTLE_MS).
 */
export class DispatcherPresenceWatch {
  private timer: NodeJS.Timeout | undefined;
  /** the unserved partitions last said ('' once all are served, or before any was said) */
  private said = '';
  /** until then (performance.now()) no partition is said unserved: Redis answered late or not at all */
  private settlingUntil = 0;
  /** each announcement the last look found → the time (Redis's clock) it lasts to */
  private lasting = new Map<string, number>();

  constructor(private readonly options: PresenceWatchOptions) {}

  start(): void {
    const { graceMs } = this.options;
    const startedAt = performance.now();
    this.timer = setInterval(
      () => void this.look(performance.now() - startedAt >= graceMs),
      Math.min(LOOK_EVERY_MS, graceMs / 3),
    );
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async look(pastGrace: boolean): Promise<void> {
    const { redis, keys, clock, logger, context, fields } = this.options;
    const sentAt = performance.now();
    const since = clock.now();
    const reply = await redis
      .zrange(keys.dispatchers, since, '+inf', 'BYSCORE', 'WITHSCORES')
      .catch(() => null);
    const answeredAt = performance.now();
    if (reply === null || answeredAt - sentAt > LATE_LOOK_MS) this.settlingUntil = answeredAt + SETTLE_MS;
    if (reply === null) return;
    const lasting = new Map<string, number>();
    for (let i = 0; i < reply.length; i += 2) lasting.set(reply[i], Number(reply[i + 1]));
    const rewritten = [...this.lasting].some(([m, end]) => end > since + CLOCK_SLACK_MS && !lasting.has(m));
    if (rewritten) this.settlingUntil = answeredAt + SETTLE_MS;
    this.lasting = lasting;
    const members = [...lasting.keys()];
    const unserved = unservedPartitions(members, keys.partitions);
    const now = partitionRanges(unserved);
    const settling = answeredAt < this.settlingUntil;
    if (now === this.said || (now !== '' && (!pastGrace || settling))) return;
    this.said = now;
    const prefix = keys.prefix;
    if (now === '') {
      logger.info(
        `A Sundial dispatcher runs again for prefix '${prefix}', every partition served: due timers reach the workers`,
        {
          ...fields,
          prefix,
        },
      );
    } else if (unserved.length === keys.partitions) {
      logger.warn(
        `No Sundial dispatcher has run for prefix '${prefix}' for ${ANNOUNCED_FOR_MS / 1000} s: due timers stay pending and reach no worker until one runs`,
        { ...fields, prefix, fix: noDispatcherFix(prefix, context) },
      );
    } else {
      logger.warn(
        `No Sundial dispatcher serves partitions ${now} (of ${keys.partitions}) of prefix '${prefix}': their due timers stay pending and reach no worker until one does`,
        { ...fields, prefix, partitions: unserved, fix: unservedFix(prefix, now, context) },
      );
    }
  }
}

/** The partitions of `count` that none of the announcements `members` serves, ascending. */
export function unservedPartitions(members: readonly string[], count: number): number[] {
  const served = new Set<number>();
  for (const member of members) {
    const partitions = servedBy(member, count);
    if (partitions === 'all') return [];
    for (const partition of partitions) served.add(partition);
  }
  return Array.from({ length: count }, (_, n) => n).filter((n) => !served.has(n));
}

const SCHEDULER = 'the scheduler (apps/scheduler, at least one replica)';

/** The warn line's fix when no dispatcher runs for the prefix at all. */
export function noDispatcherFix(prefix: string, context: PresenceContext): string {
  return context === 'external'
    ? `Deploy ${SCHEDULER} with SUNDIAL_PREFIX=${prefix}, or in an app of this prefix pass dispatch: true to SundialWorkerModule.forRoot.`
    : `Construct and start a Dispatcher for prefix '${prefix}' in this service beside the TimerRunner (docs/spec.md §5.5), or deploy ${SCHEDULER} with SUNDIAL_PREFIX=${prefix}.`;
}

/** The warn line's fix when dispatchers run but leave `partitions` (as partitionRanges wrote them) out. */
export function unservedFix(prefix: string, partitions: string, context: PresenceContext): string {
  const scheduler = `a scheduler (apps/scheduler) with SUNDIAL_PREFIX=${prefix} whose SUNDIAL_SERVE_PARTITIONS names them (unset, it serves every partition)`;
  return context === 'external'
    ? `Have a dispatcher serve partitions ${partitions}: ${scheduler}, or an app of this prefix whose SundialWorkerModule.forRoot({ dispatch: true, serve }) names them in serve (left out, every partition).`
    : `Have a Dispatcher for prefix '${prefix}' serve partitions ${partitions}: its serve option names them (left out, it serves every partition; docs/spec.md §5.5), or ${scheduler}.`;
}
