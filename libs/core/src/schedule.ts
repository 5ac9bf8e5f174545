import { nextCronOccurrence, nextCronSlot } from './cron';
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

/** Skipped slots are counted up to this: a run that covered more is reported at it, and costs no more. */
export const MAX_SKIPPED = 1000;

/** What follows a cron run (see afterCronRun). */
export interface CronRunEnd {
  /** the slot to arm, or null when the cron has none left: the timer ends */
  next: number | null;
  /** the slots after the run's due up to its end, counted up to MAX_SKIPPED */
  skipped: number;
  /** the first of them, when there is one */
  firstSkipped?: number;
}

/**
 * The one rule both backends follow when a cron run for slot `due` ends at `now` (docs/spec.md §3.3):
 * every slot after `due` up to `now` is skipped, whether the run was late to start (an outage) or
 * still going; the next slot is the first after `now`, however far (nextCronSlot). Trigger runs do
 * not come here: they leave the schedule as it was.
 */
export function afterCronRun(cron: string, tz: string, due: number, now: number): CronRunEnd {
  const end: CronRunEnd = { next: nextCronSlot(cron, tz, now), skipped: 0 };
  for (
    let slot = nextCronSlot(cron, tz, due);
    slot !== null && slot <= now;
    slot = nextCronSlot(cron, tz, slot)
  ) {
    end.firstSkipped ??= slot;
    if (++end.skipped >= MAX_SKIPPED) break;
  }
  return end;
}

/** A NormalizedSpec always carries its kind's schedule field; reaching this is a programming error. */
function required<T>(value: T | undefined, field: string, spec: NormalizedSpec): T {
  if (value === undefined) throw new TypeError(`NormalizedSpec of kind ${spec.kind} lacks ${field}`);
  return value;
}
