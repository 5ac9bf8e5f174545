import { afterCronRun, hasSlotPolicy, nextCronSlot, slotAfterRun, type SlotStep } from '@sundial/core';
import { claimInstant, type ClaimResult } from '../store/claim-reply';
import type { ClaimCopy, Completion } from '../store/fire-commands';
import { type RowFields, slotTimerOf } from '../store/row';

/** Nothing skipped, nothing to arm: shared, as it is only ever spread into a completion. */
const NO_SKIPS: Readonly<Pick<Completion, 'missed' | 'overlap'>> = Object.freeze({ missed: 0, overlap: 0 });

/**
 * What complete.lua needs for a cron beyond the outcome (cron math lives in JS), by the rule both
 * backends share (afterCronRun): the next slot after now (none: the timer ends), and the slots after
 * the run's `due` up to now, missed (before the run started, `lf`) or overlapped. A timer with a slot
 * policy, interval or cron, is stepped the same way by core's slot rule (slotAfterRun). A trigger run
 * leaves the schedule as it was and a final run (maxRuns) ends it: neither skips anything, so no skip is
 * counted that no event shows. (A plain interval's skips are counted by complete.lua, which picks its next.)
 */
export function cronFollowUp(
  fields: RowFields,
  due: number,
  ended: number,
): Pick<Completion, 'cronNext' | 'missed' | 'overlap' | 'buffered' | 'ended'> {
  const { cr: cron, tz } = fields;
  const final = fields.mr !== undefined && Number(fields.rc) >= Number(fields.mr);
  // A one-shot (most runs) has nothing to step: no slot timer is built for it.
  if (fields.k === 'once' || fields.bf !== undefined || fields.tg !== undefined || final) return NO_SKIPS;
  // A retry's or a buffered slot's run counts after the run before it (`cf`), whose skips were counted;
  // any other from its slot (`ds`: its due without jitter).
  const from = Number(fields.cf ?? fields.ds ?? due);
  const started = Number(fields.lf ?? due);
  // Never before the run started: `ended` is the worker's ClusterClock estimate, which can stand tens of
  // ms behind the claim's own bound by which the run started at its due (a TIME round trip slow under
  // load). A fast handler then "ended" before its own slot, and the next slot after that instant was the
  // slot just run: armed again, it ran twice (seen with an every-second @DistributedCron at load 25).
  const now = Math.max(ended, started);
  const timer = slotTimerOf(fields);
  if (hasSlotPolicy(timer)) {
    // core's slot rule steps a policy timer, interval or cron; complete.lua arms its answer (docs/spec.md §3.3c)
    return policyFollowUp(fields, slotAfterRun(timer, from, started, now));
  }
  if (fields.k !== 'cron' || cron === undefined || tz === undefined) return NO_SKIPS;
  const { next, missed, overlap, firstOverlap } = afterCronRun(cron, tz, from, started, now);
  // overlap 'buffer-one': the first slot that came during the run is kept, due at once with its own due.
  if (fields.ov === 'b' && firstOverlap !== undefined) {
    return { cronNext: firstOverlap, missed, overlap: overlap - 1, buffered: true };
  }
  return next === null ? { missed, overlap } : { cronNext: next, missed, overlap };
}

/** A policy timer's follow-up (FirePath.armAfterSlot does the same): buffer-one keeps a slot not after endAt. */
function policyFollowUp(
  fields: RowFields,
  step: SlotStep,
): Pick<Completion, 'cronNext' | 'missed' | 'overlap' | 'buffered' | 'ended'> {
  const { missed, overlap, firstOverlap, ended } = step;
  const endAt = fields.ea === undefined ? Infinity : Number(fields.ea);
  if (fields.ov === 'b' && firstOverlap !== undefined && firstOverlap <= endAt) {
    return { cronNext: firstOverlap, missed, overlap: overlap - 1, buffered: true };
  }
  return step.next === null ? { missed, overlap, ended } : { cronNext: step.next, missed, overlap };
}

/**
 * A claimed cron run that goes on free (overlap 'allow' / 'cancel-other', detach.lua): the slot to arm now and
 * the slots missed since its due; null when it stays held (a trigger run, the last run maxRuns allows, or a
 * cron with no slot left).
 */
export function cronDetach(fields: RowFields, due: number): { next: number; missed: number } | null {
  const { cr: cron, tz } = fields;
  const final = fields.mr !== undefined && Number(fields.rc) >= Number(fields.mr);
  if (fields.k !== 'cron' || fields.aw !== '0' || !cron || !tz || fields.tg !== undefined || final)
    return null;
  const started = Number(fields.lf ?? due);
  const timer = slotTimerOf(fields);
  // a run reschedule moved to a past due counts from the reschedule (`cf`, docs/spec.md §3.4)
  const from = Number(fields.cf ?? fields.ds ?? due);
  if (hasSlotPolicy(timer)) {
    // by the slot rule, as FirePath.start: no next slot (none left, or past endAt) keeps the run held
    const step = slotAfterRun(timer, from, started, started);
    return step.next === null ? null : { next: step.next, missed: step.missed };
  }
  const next = nextCronSlot(cron, tz, started);
  return next === null ? null : { next, missed: afterCronRun(cron, tz, from, started, started).missed };
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

/**
 * What a held one-shot's ok completion sends of its claim so that complete.lua need not read its row
 * (docs/design.md "Read-free completion"): only for a claim that replied its kept entries and a row complete.lua
 * removes (no `tg`, removeOnComplete), and a whole leaseMs (the lease's end is then the claim's instant
 * + leaseMs as claim.lua prints it: claimInstant). Undefined otherwise: the row is read.
 */
export function claimCopy(
  claimed: Extract<ClaimResult, { kind: 'claimed' }>,
  leaseMs: number,
  workerId: string,
): ClaimCopy | undefined {
  const { fields, kept } = claimed;
  if (kept === undefined || fields.k !== 'once' || fields.tg !== undefined || fields.rm === '0')
    return undefined;
  if (
    fields.lf === undefined ||
    fields.d === undefined ||
    fields.sa === undefined ||
    !Number.isInteger(leaseMs)
  )
    return undefined;
  const leaseEnd = claimInstant(claimed) + leaseMs;
  return { leaseEnd, due: fields.d, scheduledAt: fields.sa, kept, workerId };
}
