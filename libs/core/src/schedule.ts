import { nextCronOccurrence } from './cron';
import type { NormalizedSpec } from './types';

/**
 * When a freshly created timer is first due. A past `at` is returned as is: callers treat
 * due ≤ now as "run at once". An interval's first run is one interval after creation (its grid
 * anchor is now).
 */
export function firstDue(spec: NormalizedSpec, now: number): number {
  switch (spec.kind) {
    case 'once':
      return spec.atMs ?? now + required(spec.delayMs, 'delayMs', spec);
    case 'interval':
      return now + required(spec.everyMs, 'everyMs', spec);
    case 'cron':
      return nextCronOccurrence(required(spec.cron, 'cron', spec), required(spec.tz, 'tz', spec), now);
  }
}

/**
 * The first slot `anchor + k·everyMs` (k ≥ 1) strictly after `now`. Nothing is made up: however
 * many slots passed while nobody ran them, only the next one counts.
 */
export function nextGridSlot(anchor: number, everyMs: number, now: number): number {
  const slots = Math.max(1, Math.floor((now - anchor) / everyMs) + 1);
  return anchor + slots * everyMs;
}

/** A NormalizedSpec always carries its kind's schedule field; reaching this is a programming error. */
function required<T>(value: T | undefined, field: string, spec: NormalizedSpec): T {
  if (value === undefined) throw new TypeError(`NormalizedSpec of kind ${spec.kind} lacks ${field}`);
  return value;
}
