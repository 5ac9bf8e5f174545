import { SundialError } from './errors';
export { durationText, type ScheduleFields, scheduleText } from './browser/duration-text';
import { showValue } from './show-value';

/** The units a duration may use, smallest first. */
export type DurationUnit = 'ms' | 's' | 'm' | 'h' | 'd';

/**
 * A length of time written as a number and a unit: `"250ms"`, `"90s"`, `"10m"`, `"1.5h"`, `"14d"`.
 * A unit typo such as `"1hr"` is a compile error; `duration()` checks strings read from data.
 */
export type Duration = `${number}${DurationUnit}`;

const UNIT_MS: Record<DurationUnit, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Unit spellings people write (in any case), and the accepted unit and factor they stand for. */
const UNIT_WORDS: [RegExp, DurationUnit, number][] = [
  [/^(ms|msecs?|millis)$/, 'ms', 1],
  [/^(s|secs?|seconds?)$/, 's', 1],
  [/^(m|mins?|minutes?)$/, 'm', 1],
  [/^(h|hrs?|hours?)$/, 'h', 1],
  [/^(d|days?)$/, 'd', 1],
  [/^(w|wks?|weeks?)$/, 'd', 7],
];

const DURATION_PATTERN = /^(\d+(?:\.\d+)?|\.\d+)(ms|s|m|h|d)$/;
const NUMBER_THEN_WORD = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*([A-Za-z]*)\s*$/;
const FORMAT_HINT =
  'a non-negative number followed by one of ms, s, m, h, d, e.g. "250ms", "90s", "1.5h", "14d"';

/** Parses a duration string such as `"90s"` into milliseconds (rounded to a whole millisecond). */
export function duration(text: string): number {
  return parseDuration(text, 'duration');
}

/**
 * Reads a delay or interval given as milliseconds (a number) or as a duration string.
 * Errors name `field`. The sign is the caller's concern: this only converts.
 */
export function toMs(value: number | string, field: string): number {
  if (typeof value === 'string') return parseDuration(value, field);
  if (typeof value === 'number' && Number.isFinite(value)) return Math.round(value);
  throw new SundialError({
    reason: 'invalid',
    field,
    message: `${field} must be a finite number of milliseconds or a duration string, got ${showValue(value)}`,
    fix: `Write ${field} as a number of milliseconds such as 90000 or as ${FORMAT_HINT}.`,
  });
}

function parseDuration(text: unknown, field: string): number {
  const match = typeof text === 'string' ? DURATION_PATTERN.exec(text) : null;
  if (!match) {
    throw new SundialError({
      reason: 'invalid',
      field,
      message: `${field} ${showValue(text)} is not a duration`,
      fix: `Write ${field} as ${suggestion(text)}.`,
    });
  }
  const ms = Math.round(Number(match[1]) * UNIT_MS[match[2] as DurationUnit]);
  if (!Number.isSafeInteger(ms)) {
    throw new SundialError({
      reason: 'invalid',
      field,
      message: `${field} ${showValue(text)} is too long to represent in milliseconds`,
      fix: `Write ${field} as a duration shorter than a few hundred thousand years, e.g. "365d".`,
    });
  }
  return ms;
}

/** The fix for a malformed duration: the corrected text when we can guess it, else the format. */
function suggestion(text: unknown): string {
  const match = typeof text === 'string' ? NUMBER_THEN_WORD.exec(text) : null;
  if (match) {
    const [, amount, written] = match;
    const known = UNIT_WORDS.find(([pattern]) => pattern.test(written.toLowerCase()));
    if (known) return `"${Number(amount) * known[2]}${known[1]}"`;
  }
  return FORMAT_HINT;
}
