/**
 * Wall-clock arithmetic for IANA time zones on top of Intl (no tz database of our own).
 * A zone's timeline is a sequence of segments of constant UTC offset; cron reads the wall clock
 * segment by segment, which is what makes DST gaps skip and DST overlaps repeat.
 */

const DAY_MS = 86_400_000;
/** The last instant a Date can hold (September 275760). */
export const MAX_INSTANT = 8.64e15;

/**
 * Formatters kept at most; the oldest made is dropped past this. Kept by the name as given: Intl takes any
 * case spelling of a zone (`europe/PARIS`) and a bare offset (`+05:00`, refused after its formatter is
 * made), each a formatter of ~23 KB of ICU memory, so a tz field written by API callers added one for
 * the process's life per spelling. More than the ~600 names Intl knows: a process's zones stay.
 */
export const MAX_ZONE_FORMATTERS = 1000;
const formatters = new Map<string, Intl.DateTimeFormat>();

/** The formatters kept now (at most MAX_ZONE_FORMATTERS): what a test checks the bound by. */
export function zoneFormattersHeld(): number {
  return formatters.size;
}

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
    if (formatters.size >= MAX_ZONE_FORMATTERS) formatters.delete(formatters.keys().next().value as string);
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

/**
 * The zone's UTC offset in ms at instant `ms`: wall clock = ms + offset. `wholeYear` false reads that
 * one instant from Intl unless its year is held, rather than reading (and keeping) the whole year.
 */
export function zoneOffset(tz: string, ms: number, wholeYear = true): number {
  const year = new Date(ms).getUTCFullYear();
  const changes = wholeYear ? yearOf(tz, year) : years.get(`${year} ${tz}`);
  if (!changes) return readOffset(tz, ms);
  let offset = changes[0].offset;
  for (const change of changes) {
    if (change.at > ms) break;
    offset = change.offset;
  }
  return offset;
}

/**
 * The first instant in (from, to] whose offset differs from the offset at `from`, or null.
 * `wholeYear` false samples just that span (for spans of a few days) unless its years are held.
 */
export function nextOffsetChange(tz: string, from: number, to: number, wholeYear = true): number | null {
  const [first, last] = [new Date(from).getUTCFullYear(), new Date(to).getUTCFullYear()];
  if (!wholeYear && !(years.has(`${first} ${tz}`) && years.has(`${last} ${tz}`))) {
    return scanChange(tz, from, to);
  }
  const offset = zoneOffset(tz, from);
  for (let year = first; year <= last; year++) {
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

/** nextOffsetChange read from Intl day by day over (from, to], as readYear does, nothing kept. */
function scanChange(tz: string, from: number, to: number): number | null {
  const offset = readOffset(tz, from);
  for (let cursor = from; cursor < to;) {
    const next = Math.min(cursor + DAY_MS, to);
    if (readOffset(tz, next) !== offset) return bisect(tz, offset, cursor, next);
    cursor = next;
  }
  return null;
}

/** The last Intl read, as a search often reads the same instant twice in a row. */
let lastRead = { tz: '', second: NaN, offset: 0 };

/** The offset Intl reports at `ms`. */
function readOffset(tz: string, ms: number): number {
  const second = Math.floor(ms / 1000);
  if (lastRead.second === second && lastRead.tz === tz) return lastRead.offset;
  const parts: Record<string, string> = {};
  for (const { type, value } of formatter(tz).formatToParts(ms)) parts[type] = value;
  const wall = Date.UTC(+parts.year, +parts.month - 1, +parts.day, +parts.hour, +parts.minute, +parts.second);
  lastRead = { tz, second, offset: wall - second * 1000 };
  return lastRead.offset;
}

/**
 * Narrows (same, changed] down to the first changed millisecond. Intl reads whole seconds, so an
 * offset changes at the start of a second: the search narrows over seconds.
 */
function bisect(tz: string, offset: number, same: number, changed: number): number {
  let [low, high] = [Math.floor(same / 1000), Math.floor(changed / 1000)];
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (readOffset(tz, middle * 1000) === offset) low = middle;
    else high = middle;
  }
  return high * 1000;
}
