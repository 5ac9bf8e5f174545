/**
 * Wall-clock arithmetic for IANA time zones on top of Intl (no tz database of our own).
 * A zone's timeline is a sequence of segments of constant UTC offset; cron reads the wall clock
 * segment by segment, which is what makes DST gaps skip and DST overlaps repeat.
 */

const DAY_MS = 86_400_000;

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
 * tz is an IANA name on every Node (SPEC §2).
 */
export function isTimeZone(tz: string): boolean {
  try {
    return !/^[+-]/.test(formatter(tz).resolvedOptions().timeZone);
  } catch {
    return false;
  }
}

/** The zone's UTC offset in ms at instant `ms`: wall clock = ms + offset. */
export function zoneOffset(tz: string, ms: number): number {
  const parts: Record<string, string> = {};
  for (const { type, value } of formatter(tz).formatToParts(ms)) parts[type] = value;
  const wall = Date.UTC(+parts.year, +parts.month - 1, +parts.day, +parts.hour, +parts.minute, +parts.second);
  return wall - Math.floor(ms / 1000) * 1000;
}

/**
 * The first instant in (from, to] whose offset differs from the offset at `from`, or null.
 * Samples daily, then bisects to the millisecond: zones change offset at most a few times a year.
 */
export function nextOffsetChange(tz: string, from: number, to: number): number | null {
  const offset = zoneOffset(tz, from);
  for (let start = from; start < to; start += DAY_MS) {
    const end = Math.min(start + DAY_MS, to);
    if (zoneOffset(tz, end) !== offset) return bisect(tz, offset, start, end);
  }
  return null;
}

/** Narrows (same, changed] down to the first changed millisecond. */
function bisect(tz: string, offset: number, same: number, changed: number): number {
  while (changed - same > 1) {
    const middle = Math.floor((same + changed) / 2);
    if (zoneOffset(tz, middle) === offset) same = middle;
    else changed = middle;
  }
  return changed;
}
