import { cronSlotCount, nextCronOccurrence, nextCronSlot } from './cron';
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

/**
 * Why a periodic timer went past slots without running them (docs/spec.md §3.3, the `skipped` event's
 * `reason` and `sundial_runs_skipped_total{reason}`): `missed` slots passed before the run started (the
 * cluster was down or behind), `overlap` slots came while the run went on.
 */
export type SkipReason = 'missed' | 'overlap';

/** The slots a periodic run went past, by reason, with the first of each when there is one. */
export interface Skips {
  missed: number;
  overlap: number;
  firstMissed?: number;
  firstOverlap?: number;
}

/** What follows a cron run (see afterCronRun). */
export interface CronRunEnd extends Skips {
  /** the slot to arm, or null when the cron has none left: the timer ends */
  next: number | null;
}

/**
 * The one rule both backends follow when a cron run for slot `due`, started at `started`, ends at `now`
 * (docs/spec.md §3.3): every slot after `due` up to `now` is skipped — `missed` up to `started`, `overlap`
 * after it — each one counted, however many (cronSlotCount: by day, not slot by slot); the next slot is
 * the first after `now`, however far (nextCronSlot). Trigger runs do not come here: they leave the
 * schedule as it was.
 */
export function afterCronRun(
  cron: string,
  tz: string,
  due: number,
  started: number,
  now: number,
): CronRunEnd {
  const end: CronRunEnd = { next: nextCronSlot(cron, tz, now), missed: 0, overlap: 0 };
  const first = nextCronSlot(cron, tz, due);
  if (first === null || first > now) return end;
  // missed: the slots of (due, split]; overlap: those of (split, now]
  const split = Math.max(due, Math.min(started, now));
  end.missed = cronSlotCount(cron, tz, due, split);
  end.overlap = cronSlotCount(cron, tz, split, now);
  if (end.missed > 0) end.firstMissed = first;
  if (end.overlap > 0)
    end.firstOverlap = end.missed > 0 ? (nextCronSlot(cron, tz, split) ?? undefined) : first;
  return end;
}

/**
 * The grid slots of an interval (`anchor + k·everyMs`) strictly between a run's `due` and the `next` slot
 * armed after it, split at `started` like afterCronRun: nothing is made up, and what was gone past is
 * counted. complete.lua and claim.lua count the same way (`grid_skips`).
 */
export function gridSkips(
  anchor: number,
  everyMs: number,
  due: number,
  started: number,
  next: number,
): Skips {
  const index = (time: number): number => Math.floor((time - anchor) / everyMs);
  const lastBeforeNext = Math.ceil((next - anchor) / everyMs) - 1;
  const atDue = index(due);
  const atStart = Math.min(Math.max(index(started), atDue), lastBeforeNext);
  const skips: Skips = {
    missed: Math.max(0, atStart - atDue),
    overlap: Math.max(0, lastBeforeNext - atStart),
  };
  if (skips.missed > 0) skips.firstMissed = anchor + (atDue + 1) * everyMs;
  if (skips.overlap > 0) skips.firstOverlap = anchor + (atStart + 1) * everyMs;
  return skips;
}

/** A NormalizedSpec always carries its kind's schedule field; reaching this is a programming error. */
function required<T>(value: T | undefined, field: string, spec: NormalizedSpec): T {
  if (value === undefined) throw new TypeError(`NormalizedSpec of kind ${spec.kind} lacks ${field}`);
  return value;
}
