import { nextCronOccurrence } from '@sundial/core';
import type { Completion } from '../store/fire-commands';
import type { RowFields } from '../store/row';

/** Counting overlapped slots stops here: a run that lasted longer than this many slots is reported at it. */
const MAX_SKIPPED = 1000;

/**
 * What complete.lua needs for a cron beyond the outcome (cron math lives in JS): the next occurrence
 * after now, and how many slots came while the run that started at `startedAt` went on.
 */
export function cronFollowUp(
  fields: RowFields,
  startedAt: number,
  now: number,
): Pick<Completion, 'cronNext' | 'skipped'> {
  const { cr: cron, tz } = fields;
  if (fields.k !== 'cron' || cron === undefined || tz === undefined) return { skipped: 0 };
  let skipped = 0;
  for (let slot = nextCronOccurrence(cron, tz, startedAt); slot <= now && skipped < MAX_SKIPPED; skipped++) {
    slot = nextCronOccurrence(cron, tz, slot);
  }
  return { cronNext: nextCronOccurrence(cron, tz, now), skipped };
}

/** The completion that settles an at-most-once run whose worker was lost (SPEC §3.8). */
export function lostCompletion(fields: RowFields, now: number): Completion {
  return {
    id: fields.id,
    key: fields.key,
    version: Number(fields.v),
    runCount: Number(fields.rc ?? 0),
    mode: 'held',
    outcome: 'lost',
    error: { message: `the worker running '${fields.key}' was lost before the run finished`, reason: 'lost' },
    ...cronFollowUp(fields, Number(fields.lf), now),
  };
}
