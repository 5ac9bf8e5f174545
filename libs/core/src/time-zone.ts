/**
 * Wall-clock arithmetic for IANA time zones on top of Intl (no tz database of our own).
 * A zone's timeline is a sequence of segments of constant UTC offset; cron reads the wall clock
 * segment by segment, which is what makes DST gaps skip and DST overlaps repeat.
 */

const DAY_MS = 86_400_000;
/** The last instant a Date can hold (September 275760). */
export const MAX_INSTANT = 8.64e15;

const formatters = new Map<string, Intl.DateTimeFormat>();

/** One formatter per zone: constructing them is far slower than using them. */
function formatter(tz: string): Intl.DateTimeFormat {
  let format = formatters.get(tz);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(tz, format);
  }
  return format;
}

/**
 * Whether Intl knows the zone (IANA names and their aliases, case-insensitive). Intl on Node ≥ 24
 * also takes a bare UTC offset (`+05:00`, `−0500`), which it resolves to `±HH:MM`: refused, as
 * tz is an IANA name on every Node (docs/spec.md §2).
 */
export function isTimeZone(tz: string): boolean {
  try {
    return !/^[+-]/.test(formatter(tz).resolvedOptions().timeZone);
  } catch {
    return false;
  }
}

/**
 * A zone's offsets over one UTC year: the offset at the year's start, then each change, in order.
 * Reading a year costs a few hundred Intl reads; the years in use are kept (the oldest read is dropped
 * past MAX_YEARS), so a lookup usually costs none.
 */
interface Change {
  at: number;
  offset: number;
}
const MAX_YEARS = 2048;
const years = new Map<string, Change[]>();

/** The zone's UTC offset in ms at instant `ms`: wall clock = ms + offset. */
export function zoneOffset(tz: string, ms: number): number {
  const changes = yearOf(tz, new Date(ms).getUTCFullYear());
  let offset = changes[0].offset;
  for (const change of changes) {
    if (change.at > ms) break;
    offset = change.offset;
  }
  return offset;
}

/** The first instant in (from, to] whose offset differs from the offset at `from`, or null. */
export function nextOffsetChange(tz: string, from: number, to: number): number | null {
  const offset = zoneOffset(tz, from);
  const last = new Date(to).getUTCFullYear();
  for (let year = new Date(from).getUTCFullYear(); year <= last; year++) {
    for (const change of yearOf(tz, year)) {
      if (change.at > to) return null;
      if (change.at > from && change.offset !== offset) return change.at;
    }
  }
  return null;
}

function yearOf(tz: string, year: number): Change[] {
  const key = `${year} ${tz}`;
  let changes = years.get(key);
  if (changes) return changes;
  changes = readYear(tz, year);
  if (years.size >= MAX_YEARS) years.delete(years.keys().next().value as string);
  years.set(key, changes);
  return changes;
}

/**
 * Samples the year daily, then bisects each change to the millisecond: offsets change at most a few
 * times a year, never twice within a day (in the tz data Node ships, changes after 2020 are at least
 * 7 days apart: Asia/Gaza around Ramadan).
 */
function readYear(tz: string, year: number): Change[] {
  const start = Date.UTC(year, 0, 1);
  const end = year >= new Date(MAX_INSTANT).getUTCFullYear() ? MAX_INSTANT : Date.UTC(year + 1, 0, 1);
  const changes: Change[] = [{ at: start, offset: readOffset(tz, start) }];
  let offset = changes[0].offset;
  for (let cursor = start; cursor < end;) {
    const next = Math.min(cursor + DAY_MS, end);
    if (readOffset(tz, next) === offset) {
      cursor = next;
      continue;
    }
    const at = bisect(tz, offset, cursor, next);
    if (at >= end) break;
    offset = readOffset(tz, at);
    changes.push({ at, offset });
    cursor = at;
  }
  return changes;
}

/** The offset Intl reports at `ms`. */
function readOffset(tz: string, ms: number): number {
  const parts: Record<string, string> = {};
  for (const { type, value } of formatter(tz).formatToParts(ms)) parts[type] = value;
  const wall = Date.UTC(+parts.year, +parts.month - 1, +parts.day, +parts.hour, +parts.minute, +parts.second);
  return wall - Math.floor(ms / 1000) * 1000;
}

/** Narrows (same, changed] down to the first changed millisecond. */
function bisect(tz: string, offset: number, same: number, changed: number): number {
  while (changed - same > 1) {
    const middle = Math.floor((same + changed) / 2);
    if (readOffset(tz, middle) === offset) same = middle;
    else changed = middle;
  }
  return changed;
}
