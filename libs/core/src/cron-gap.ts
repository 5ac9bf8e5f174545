import { nextCronSlot } from './cron';
import { WallPattern } from './cron-pattern';
import { MAX_INSTANT, nextOffsetChange } from './time-zone';

const DAY_MS = 86_400_000;

/**
 * The shortest time between two slots in a row of a cron: `ms`, and `at` (the first of the two) when a
 * change of the zone's offset makes it (a fall-back repeating a wall time, a spring-forward shortening a day).
 */
export interface CronGap {
  ms: number;
  at?: number;
}

/** Answers kept per (year, zone, expression), so a batch of one cron costs one computation; oldest dropped. */
const MAX_GAPS = 1000;
const gaps = new Map<string, CronGap | null>();

/**
 * The shortest gap between two slots in a row of cron `expr` in `tz` (an expression and zone
 * `validateCron` accepted), when it is at most a day — null when none is (a jitter is at most a day:
 * longer gaps bound nothing). What a cron's jitter must be shorter than (docs/spec.md §3.3c).
 *
 * Why this horizon: the UTC year of `fromMs` (the timer's start) and the next one hold at least a year
 * from the start, so each of the zone's yearly offset changes at least once, and the answer can be kept
 * per year. A zone's future rule change is not foreseen (nor is it by the slots). `endAt` is not read:
 * the jitter is bounded by the cron's shape, as an interval's is by `every`.
 *
 * Cheap whatever the cron: slots keep their wall-clock spacing between offset changes, and that spacing
 * is the same on every matching day — the gaps inside a day (read from the fields, a minute at a time),
 * and the overnight one from a day's last slot to the next day's first (only when two days in a row
 * match). Only the pairs at each offset change differ — the one across it, and the one after a slot at
 * the change itself (where fixed times a spring-forward jumps over run) — and a pair further apart than
 * the shortest gap so far cannot be shorter: a few slot searches per change, not one per slot.
 */
export function shortestCronGap(expr: string, tz: string, fromMs: number): CronGap | null {
  const year = new Date(fromMs).getUTCFullYear();
  const key = `${year} ${tz} ${expr}`;
  const kept = gaps.get(key);
  if (kept !== undefined) return kept;
  const gap = computeGap(expr, tz, Date.UTC(year, 0, 1), Math.min(Date.UTC(year + 2, 0, 1), MAX_INSTANT));
  if (gaps.size >= MAX_GAPS) gaps.delete(gaps.keys().next().value as string);
  gaps.set(key, gap);
  return gap;
}

function computeGap(expr: string, tz: string, start: number, end: number): CronGap | null {
  const pattern = new WallPattern(expr);
  const day = pattern.daySeconds();
  let shortest = day.gap * 1000;
  const overnight = (86_400 - day.last + day.first) * 1000;
  // day starts read as wall times: the horizon's calendar days, give or take the zone's offset
  if (overnight < shortest && pattern.firstOfTwoDays(start, end - DAY_MS) !== null) shortest = overnight;
  let gap: CronGap | null = shortest <= DAY_MS ? { ms: shortest } : null;
  for (
    let change = nextOffsetChange(tz, start, end);
    change !== null;
    change = nextOffsetChange(tz, change, end)
  ) {
    const window = gap?.ms ?? DAY_MS;
    // the slots from `window` before the change up to the first one at or after it
    let [before, slot] = [null as number | null, nextCronSlot(expr, tz, change - window - 1)];
    while (slot !== null && slot < change) [before, slot] = [slot, nextCronSlot(expr, tz, slot)];
    if (slot === null) continue;
    if (before !== null) gap = shorter(gap, before, slot);
    // a fixed time a spring-forward jumps over runs at the change (§3.3): off the wall-clock spacing too
    const after = slot === change ? nextCronSlot(expr, tz, slot) : null;
    if (after !== null) gap = shorter(gap, slot, after);
  }
  return gap;
}

/** `gap`, or the one from `first` to `second` when that is shorter and at most a day. */
function shorter(gap: CronGap | null, first: number, second: number): CronGap | null {
  const ms = second - first;
  return ms <= DAY_MS && (gap === null || ms < gap.ms) ? { ms, at: first } : gap;
}
