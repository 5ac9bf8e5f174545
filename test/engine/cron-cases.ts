import { nextCronOccurrence } from '@sundial/core';

// Helpers of the cron specs (libs/core/src/cron*.spec.ts).

/** The next `count` occurrences after `from`, as UTC ISO strings. */
export function occurrences(expr: string, tz: string, from: string, count: number): string[] {
  const found: string[] = [];
  let after = Date.parse(from);
  for (let i = 0; i < count; i++) {
    after = nextCronOccurrence(expr, tz, after);
    found.push(new Date(after).toISOString());
  }
  return found;
}

/** Expected instants written as local wall time with the offset in force, shown as UTC ISO strings. */
export const instants = (...local: string[]) => local.map((text) => new Date(Date.parse(text)).toISOString());

export const refusal = (fields: Record<string, unknown>) =>
  expect.objectContaining({ reason: 'invalid', ...fields });

/** The zones the specs read expressions in: DST in North America and Europe, a half-hour offset, a half-hour DST shift. */
export const ZONES = ['America/Toronto', 'Europe/Berlin', 'Asia/Kolkata', 'Australia/Lord_Howe'];
