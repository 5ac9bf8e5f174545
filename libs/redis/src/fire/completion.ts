import { afterCronRun } from '@sundial/core';
import type { Completion } from '../store/fire-commands';
import type { RowFields } from '../store/row';

/**
 * What complete.lua needs for a cron beyond the outcome (cron math lives in JS), by the rule both
 * backends share (afterCronRun): the next slot after now (none: the timer ends), and how many slots
 * came after the run's `due` before it ended. A trigger run leaves the schedule as it was and a final
 * run (maxRuns) ends it: neither skips anything, so no skip is counted that no event shows.
 */
export function cronFollowUp(
  fields: RowFields,
  due: number,
  now: number,
): Pick<Completion, 'cronNext' | 'skipped'> {
  const { cr: cron, tz } = fields;
  const final = fields.mr !== undefined && Number(fields.rc) >= Number(fields.mr);
  if (fields.k !== 'cron' || cron === undefined || tz === undefined || fields.tg !== undefined || final) {
    return { skipped: 0 };
  }
  const { next, skipped } = afterCronRun(cron, tz, due, now);
  return next === null ? { skipped } : { cronNext: next, skipped };
}

/** The completion that settles an at-most-once run whose worker was lost (SPEC §3.8). */
export function lostCompletion(fields: RowFields, now: number): Completion {
  return {
    id: fields.id,
    key: fields.key,
    version: Number(fields.v),
    runCount: Number(fields.rc ?? 0),
    // reconcile.lua marks a free run's lost lease `fr` (its fields are the row's as of that run)
    mode: fields.fr === '1' ? 'free' : 'held',
    outcome: 'lost',
    error: { message: `the worker running '${fields.key}' was lost before the run finished`, reason: 'lost' },
    ...cronFollowUp(fields, Number(fields.d), now),
  };
}
