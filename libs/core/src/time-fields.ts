import { toMs } from './duration';
import { parseIsoInstant } from './iso-instant';
import { refusals } from './refusals';
import { showValue } from './show-value';

/* The time fields of a spec or a reschedule (docs/spec.md §2): delay, every and at, in milliseconds. */

/** The last instant a Date can hold. */
const MAX_EPOCH_MS = 8.64e15;
/**
 * The longest delay or interval: 100 years. Without a bound, `delay: 1e20` gives a due time no Date
 * can hold; a century keeps `now + delay` a real date for any now this code will see.
 */
const MAX_DURATION_MS = 100 * 365.25 * 86_400_000;

export function normalizeDelay(delay: unknown): number {
  const ms = withinBound(toMs(delay as number | string, 'delay'), delay, 'delay');
  if (ms < 0) {
    throw refusals.invalid(
      'delay',
      `delay ${showValue(delay)} is negative`,
      'Write a delay of 0 or more, e.g. 5000 or "5s".',
    );
  }
  return ms;
}

/** The shortest interval, and where it is set (a refusal's fix names it). */
export interface EveryLimit {
  min: number;
  setBy: string;
}

export function normalizeEvery(every: unknown, limit: EveryLimit): number {
  const minEveryMs = limit.min;
  const ms = withinBound(toMs(every as number | string, 'every'), every, 'every');
  if (ms <= 0) {
    throw refusals.invalid(
      'every',
      `every ${showValue(every)} is not positive`,
      'Write a positive interval, e.g. 30000 or "30s".',
    );
  }
  if (ms < minEveryMs) {
    throw refusals.invalid(
      'every',
      `every ${showValue(every)} is below this cluster's minimum interval of ${minEveryMs} ms`,
      `Write every as at least ${minEveryMs} (ms), e.g. "${minEveryMs}ms"; the minimum is set by ${limit.setBy}.`,
    );
  }
  return ms;
}

function withinBound(ms: number, given: unknown, field: 'delay' | 'every'): number {
  if (ms > MAX_DURATION_MS) {
    throw refusals.invalid(
      field,
      `${field} ${showValue(given)} is longer than the longest ${field === 'delay' ? 'delay' : 'interval'}`,
      `Write ${field} as at most 100 years (${MAX_DURATION_MS} ms, "36525d")${field === 'delay' ? ', or give an absolute time with at' : ''}.`,
    );
  }
  return ms;
}

/** An instant: `at`, or another field that takes one (startAt, endAt, a backfill range). */
export function normalizeAt(at: unknown, field = 'at'): number {
  const ms = typeof at === 'string' ? parseIsoInstant(at) : at;
  if (ms === 'missing-zone') {
    throw refusals.invalid(
      field,
      `${field} ${showValue(at)} has no zone offset, so it names a wall time rather than an instant`,
      `Append "Z" for UTC or an offset such as "-05:00", e.g. "${/T/i.test(String(at)) ? at : `${at}T00:00:00`}Z".`,
    );
  }
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0 || ms > MAX_EPOCH_MS) {
    throw refusals.invalid(
      field,
      `${field} ${showValue(at)} is not a point in time`,
      `Write ${field} as epoch milliseconds (e.g. 1772355600000) or an ISO-8601 date-time with offset (e.g. "2026-03-01T09:00:00Z").`,
    );
  }
  return Math.round(ms);
}
