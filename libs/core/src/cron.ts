import { closestName } from './closest-name';
import { WallPattern } from './cron-pattern';
import { badCron } from './cron-syntax';
import { SundialError } from './errors';
import { showValue } from './show-value';
import { MAX_INSTANT, isTimeZone, nextOffsetChange, zoneOffset } from './time-zone';

const DAY_MS = 86_400_000;
/** How far ahead an expression must occur to be accepted (docs/spec.md §2: "in the next 4 years"). */
const HORIZON_MS = 4 * 366 * DAY_MS;
/** The Gregorian calendar repeats every 400 years (weekdays included): a slot not found in one never comes. */
const CYCLE_MS = 146_097 * DAY_MS;
/** Parsed expressions kept, so a live cron's next slot costs no parse; the oldest is dropped past this. */
const MAX_PATTERNS = 1000;
const patterns = new Map<string, WallPattern>();

/** Throws `invalid` (field `tz` or `cron`) unless `expr` parses and occurs within 4 years in `tz`. */
export function validateCron(expr: string, tz: string): void {
  nextCronOccurrence(expr, tz, Date.now());
}

/**
 * The first occurrence of `expr` strictly after `afterMs`, read on the wall clock of `tz`
 * (docs/spec.md §3.3); throws `invalid` when there is none in the next 4 years. For new specs.
 */
export function nextCronOccurrence(expr: string, tz: string, afterMs: number): number {
  const limit = Math.min(afterMs + HORIZON_MS, MAX_INSTANT);
  const next = search(compile(expr, tz), tz, afterMs, limit);
  if (next !== null) return next;
  const since = `in the 4 years after ${new Date(afterMs).toISOString()}`;
  // Its wall times come on a clock without DST: each one in tz fell in a spring-forward gap, and its hour
  // is not fixed, or the gap's end would have run them (§3.3).
  const gaps = search(compile(expr, 'UTC'), 'UTC', afterMs, limit) !== null;
  throw new SundialError({
    reason: 'invalid',
    field: 'cron',
    message: gaps
      ? `cron ${showValue(expr)} does not occur ${since} in ${tz}: each time it names falls in a daylight-saving gap there, which the clock skips, and its hour is a range or step, so the gap's end does not run it`
      : `cron ${showValue(expr)} does not occur ${since}`,
    fix: gaps
      ? 'Write the hour as one value (e.g. "2" rather than "2-2"), a fixed time that runs when the clock jumps past it, or a wall time the clock shows on those days, e.g. 03:00 rather than 02:30 on the day clocks spring forward.'
      : 'Write a cron expression that occurs at least once every 4 years, e.g. "0 0 28 2 *" rather than a day that does not exist.',
  });
}

/**
 * The next slot of a live cron timer: the first occurrence strictly after `afterMs` however far it
 * is (`0 0 29 2 *` waits 8 years from 2096 to 2104), or null when there is none: not in a whole
 * 400-year cycle, or not before the last instant a Date can hold. Never throws for an expression
 * `validateCron` accepted.
 */
export function nextCronSlot(expr: string, tz: string, afterMs: number): number | null {
  return search(compile(expr, tz), tz, afterMs, Math.min(afterMs + CYCLE_MS, MAX_INSTANT));
}

/** nextCronSlot for a timer that must have one to go on (resume): throws `invalid` when there is none. */
export function liveCronSlot(expr: string, tz: string, afterMs: number): number {
  const next = nextCronSlot(expr, tz, afterMs);
  if (next !== null) return next;
  throw new SundialError({
    reason: 'invalid',
    field: 'cron',
    message: `cron ${showValue(expr)} has no slot after ${new Date(afterMs).toISOString()}, so the timer cannot go on`,
    fix: 'Cancel the timer, or replace it with a cron expression that occurs.',
  });
}

/**
 * How many slots of `expr` lie in (afterMs, upToMs]: the ones nextCronSlot would give one after another,
 * counted a constant-offset segment at a time as `search` reads them (a fixed time the clock jumped
 * over counts once at the segment's start, one it shows again none; other wall times as the clock shows
 * them), each segment's wall times by WallPattern.countBetween — so that however many slots a timer went
 * past, counting them costs a few steps per day, not one per slot.
 */
export function cronSlotCount(expr: string, tz: string, afterMs: number, upToMs: number): number {
  const pattern = compile(expr, tz);
  const last = Math.min(Math.floor(upToMs), MAX_INSTANT);
  let from = Math.floor(afterMs) + 1;
  if (from > last) return 0;
  let shown = pattern.fixedHour ? shownBefore(tz, from) : -Infinity;
  let count = 0;
  for (;;) {
    const offset = zoneOffset(tz, from);
    const change = nextOffsetChange(tz, from, last);
    const end = (change ?? last + 1) - 1 + offset;
    const start = segmentStart(pattern, from + offset, shown);
    // a slot at `from` for the times jumped over stands for a time matching right there too
    if (start.jumped) count += 1;
    count += pattern.countBetween(start.jumped ? from + offset + 1 : start.floor, end);
    if (change === null) return count;
    shown = Math.max(shown, end);
    from = change;
  }
}

/**
 * Where a segment's wall times are read from (its first instant shows `wall`): there, unless the
 * pattern's hour is fixed (else every wall time runs as the clock shows it). A fixed time runs once, at the first instant the
 * clock reads it or reads past it (docs/spec.md §3.3): not again when a fall-back shows it a second
 * time — reading starts after `shown`, the latest wall time the clock showed before — and, when a spring-forward jumped over it (the wall times
 * after `shown` and before `wall`), at the segment's first instant: `jumped`.
 */
function segmentStart(pattern: WallPattern, wall: number, shown: number): { floor: number; jumped: boolean } {
  if (!pattern.fixedHour) return { floor: wall, jumped: false };
  if (shown + 1 >= wall) return { floor: shown + 1, jumped: false };
  const skipped = pattern.firstAtOrAfter(shown + 1, wall - 1);
  return { floor: wall, jumped: skipped !== null && skipped < wall };
}

/**
 * The latest wall time the clock of `tz` showed before instant `at`: the one at `at - 1`, unless a
 * fall-back shortly before turned the clock back — then the one just before that change. Instants more
 * than SPREAD_MS before `at` showed earlier wall times than `at - 1` does, so only changes since are read.
 */
function shownBefore(tz: string, at: number): number {
  let shown = at - 1 + zoneOffset(tz, at - 1);
  for (
    let change = nextOffsetChange(tz, at - SPREAD_MS, at - 1);
    change !== null;
    change = nextOffsetChange(tz, change, at - 1)
  ) {
    shown = Math.max(shown, change - 1 + zoneOffset(tz, change - 1));
  }
  return shown;
}

/** UTC offsets stay within ±18 h (tz data: −15:56 to +15:13), so walls of instants this far apart cross. */
const MAX_OFFSET_MS = 18 * 3_600_000;
const SPREAD_MS = 2 * MAX_OFFSET_MS;

/**
 * The zone's timeline is walked one constant-offset segment at a time. Inside a segment wall time
 * and instant move together, so the first matching wall time is the answer unless the offset changes
 * before it; then the search restarts at the change, on the new wall clock. So a wall time runs as
 * often as the clock shows it — none in a spring-forward gap, once per pass of a fall-back overlap —
 * except a fixed time (an hour written as values), read through segmentStart: once, when the clock
 * first reads it or past it (§3.3). `shown` carries the latest wall time shown so far for that.
 *
 * A first match more than SPREAD_MS ahead is jumped to: past SPREAD_MS from `from` every instant's
 * wall time is past the wall time at `from`, so no instant before `wall - MAX_OFFSET_MS` can show a
 * match, whatever offsets lie between. Only
 * the span next to `from` and the one next to the match are read, and years not already held are read
 * at those instants rather than whole: a cron whose every slot falls in a gap (`30 2-2 * 3 SUN#2` in
 * New York) concludes "none in 400 years" from ~400 short reads rather than 400 year reads (seconds
 * of event loop).
 */
function search(pattern: WallPattern, tz: string, afterMs: number, limit: number): number | null {
  let from = Math.floor(afterMs) + 1;
  if (from > limit) return null;
  let shown = pattern.fixedHour ? shownBefore(tz, from) : -Infinity;
  let wholeYear = true;
  while (from <= limit) {
    const offset = zoneOffset(tz, from, wholeYear);
    const start = segmentStart(pattern, from + offset, shown);
    if (start.jumped) return from;
    const wall = pattern.firstAtOrAfter(start.floor, limit + offset);
    if (wall === null || wall - offset > limit) return null;
    const far = wall - offset - from > SPREAD_MS;
    const to = far ? from + SPREAD_MS : wall - offset;
    const change = nextOffsetChange(tz, from, to, wholeYear);
    if (change !== null) [shown, from] = [Math.max(shown, change - 1 + offset), change];
    else if (!far) return wall - offset;
    else {
      // No clock before the new `from` shows `wall` or a later time, and no match lies before `wall`:
      // reading on from `wall` is the same as knowing every time before it shown (and nothing jumped over).
      [shown, from, wholeYear] = [Math.max(shown, wall - 1), Math.max(to, wall - MAX_OFFSET_MS), false];
    }
  }
  return null;
}

function compile(expr: string, tz: string): WallPattern {
  if (typeof tz !== 'string' || !isTimeZone(tz)) throw unknownZone(tz);
  if (typeof expr !== 'string') throw badCron(expr, 'it is not a string');
  let pattern = patterns.get(expr);
  if (!pattern) {
    pattern = new WallPattern(expr);
    if (patterns.size >= MAX_PATTERNS) patterns.delete(patterns.keys().next().value as string);
    patterns.set(expr, pattern);
  }
  return pattern;
}

function unknownZone(tz: unknown): SundialError {
  const guess = typeof tz === 'string' ? closestName(tz, Intl.supportedValuesOf('timeZone')) : null;
  return new SundialError({
    reason: 'invalid',
    field: 'tz',
    message: `tz ${showValue(tz)} is not a known IANA time zone`,
    fix: guess
      ? `Did you mean "${guess}"? Write tz as an IANA zone name.`
      : 'Write tz as an IANA zone name such as "America/Toronto", "Europe/Berlin" or "UTC".',
  });
}
