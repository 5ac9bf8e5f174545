import { afterCronRun } from '@sundial/core';
import type { Completion } from '../store/fire-commands';
import type { RowFields } from '../store/row';

/**
 * What complete.lua needs for a cron beyond the outcome (cron math lives in JS), by the rule both
 * backends share (afterCronRun): the next slot after now (none: the timer ends), and the slots after
 * the run's `due` up to now, missed (before the run started, `lf`) or overlapped. A trigger run leaves
 * the schedule as it was and a final run (maxRuns) ends it: neither skips anything, so no skip is
 * counted that no event shows. (An interval's skips are counted by complete.lua, which picks its next.)
 */
export function cronFollowUp(
  fields: RowFields,
  due: number,
  now: number,
): Pick<Completion, 'cronNext' | 'missed' | 'overlap'> {
  const { cr: cron, tz } = fields;
  const final = fields.mr !== undefined && Number(fields.rc) >= Number(fields.mr);
  if (fields.k !== 'cron' || cron === undefined || tz === undefined || fields.tg !== undefined || final) {
    return { missed: 0, overlap: 0 };
  }
  const { next, missed, overlap } = afterCronRun(cron, tz, due, Number(fields.lf ?? due), now);
  return next === null ? { missed, overlap } : { cronNext: next, missed, overlap };
}

/** The completion that settles an at-most-once run whose worker was lost (docs/spec.md §3.8). */
export function lostCompletion(fields: RowFields, now: number): Completion {
  return {
    id: fields.id,
    key: fields.key,
    version: Number(fields.v),
    // a held run is known by its own runCount (`hc`, claim.lua); a free run's fields carry that run's `rc`
    runCount: Number((fields.fr === '1' ? undefined : fields.hc) ?? fields.rc ?? 0),
    // reconcile.lua marks a free run's lost lease `fr` (its fields are the row's as of that run)
    mode: fields.fr === '1' ? 'free' : 'held',
    outcome: 'lost',
    error: { message: `the worker running '${fields.key}' was lost before the run finished`, reason: 'lost' },
    ...cronFollowUp(fields, Number(fields.d), now),
  };
}
