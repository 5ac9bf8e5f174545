import type { NextTime, Preview } from './ledger';
import { firstDue } from './schedule';
import {
  DEFAULT_ALL_WINDOW_MS,
  dueOfSlot,
  firstSlot,
  hasSlotPolicy,
  lateSlot,
  slotAfter,
  type SlotTimer,
} from './slot-policy';
import { zoneOffset } from './time-zone';
import type { NormalizedSpec, Timer } from './types';
import { normalizeSpec, type SpecLimits } from './validation';

/**
 * What a row says of its armed due beyond the Timer (docs/spec.md §3.9), so that `next` lists the runs
 * that will in fact come: a trigger run asked for and not started yet (Redis `tg`, until a worker claims
 * it; the engine starts it at once), a retry of a slot whose first try runCount counted already (it takes
 * no run of maxRuns, §3.3b), a backfill in progress (the slots still to run after the armed one, then the
 * slot the schedule goes back to, §3.3c).
 */
export interface ArmedState {
  trigger?: number;
  retry?: boolean;
  /** `moved`: it goes back to a run `reschedule` moved, or a retry, at its own due (no slot) */
  backfill?: { rest: readonly number[]; resume: number; moved?: boolean };
  /** the armed due runs however late: a run `reschedule` moved (§3.4), the slot overlap 'buffer-one' kept (§3.3a) */
  asked?: boolean;
  /** the backend's now: an armed slot its wake will find late under a slot policy does not run (§3.3c) */
  now?: number;
}

/**
 * The next `count` due times of a live timer as its schedule and slot policies will produce them
 * (docs/spec.md §3.9, §3.3c): a pending trigger's run, its armed `dueAt` (unless that run is going on
 * now), a backfill's other slots, then each following slot — an interval's grid, a cron's occurrences in
 * its zone (DST rules of §3.3) — moved by its jitter, none after `endAt`, up to `maxRuns`. A paused or
 * finished timer has none.
 */
export function nextTimesOf(timer: Timer, count: number, armed: ArmedState = {}): NextTime[] {
  if (timer.status !== 'pending' && timer.status !== 'running') return [];
  // The run going on is the armed due's when it started at or after it (a slot's run starts at the later
  // of its claim and its due): that due is not to come, and runCount counts it already. A trigger run
  // started before the armed due, which is still to come.
  const ownRun = timer.status === 'running' && timer.last !== null && timer.last.started >= timer.dueAt;
  const pending = timer.status === 'pending';
  // A pending retry is its slot's run again: runCount counted the slot's first try, so it takes no run.
  const retry = pending && armed.retry === true ? 1 : 0;
  const remaining =
    timer.maxRuns === undefined ? undefined : timer.maxRuns - timer.runCount + (ownRun ? 1 : 0) + retry;
  const backfill = armed.backfill;
  const sequence: DueSequence = {
    trigger: pending ? armed.trigger : undefined,
    first: timer.dueAt,
    // a retry's or a backfill's due is no slot's: the slots go on after it (a backfill's from its resume)
    slot: retry || backfill ? timer.dueAt : slotOfDue(timer, timer.dueAt),
    ...(backfill && { backfill }),
    ...(armed.now !== undefined && { now: armed.now }),
    buffered: ownRun && timer.overlap === 'buffer-one',
  };
  if (pending && !retry && !backfill && !armed.asked && !passLate(timer, sequence, armed.now)) {
    return sequence.trigger === undefined ? [] : [withOffset(sequence.trigger, timer.tz)];
  }
  const times = dueTimes(timer, sequence, remaining, count + (ownRun ? 1 : 0));
  return (ownRun ? times.slice(1) : times).map((at) => withOffset(at, timer.tz));
}

/**
 * An armed slot its wake will pass as late — at its due, or now when that passed (catchup 'skip', a
 * catchupWindow: lateSlot, as FirePath and the Redis claim do) — gives way to the slot that runs instead;
 * false when none comes (the timer ends there). A retry or backfill slot is never passed as late: the
 * caller leaves them out.
 */
function passLate(timer: SlotTimer, sequence: DueSequence, now: number | undefined): boolean {
  if (timer.kind === 'once' || !hasSlotPolicy(timer)) return true;
  const late = lateSlot(timer, sequence.slot, Math.max(now ?? -Infinity, sequence.first));
  if (!late) return true;
  const slot = late.next === null ? null : slotThatRuns(timer, late.next);
  if (slot === null) return false;
  [sequence.slot, sequence.first] = [slot, dueOfSlot(timer, slot)];
  return true;
}

/**
 * `preview`: the spec validated as `schedule` does it (an endAt before the first slot refused too), and
 * the due times it would have if created at `now`, by its slot policies.
 */
export function previewSpec(
  spec: unknown,
  limits: SpecLimits | undefined,
  now: number,
  count: number,
  /** what the backend's schedule checks beyond the spec rules, at the same point (the engine: its handlers) */
  check: (normalized: NormalizedSpec) => void = () => undefined,
): Preview {
  const normalized = normalizeSpec(spec, limits);
  check(normalized);
  const timer: SlotTimer = { ...normalized, scheduledAt: now };
  const slot = normalized.kind === 'once' ? firstDue(normalized, now) : firstSlot(normalized, now);
  const sequence: DueSequence = { first: dueOfSlot(timer, slot), slot };
  const times = passLate(timer, sequence, now) ? dueTimes(timer, sequence, normalized.maxRuns, count) : [];
  return { spec: normalized, next: times.map((at) => withOffset(at, normalized.tz)) };
}

/** `at` as ISO 8601 (UTC) with the zone's offset there: `+00:00` for a timer without a zone. */
export function withOffset(at: number, tz: string | undefined): NextTime {
  const offsetMinutes = Math.round(zoneOffset(tz ?? 'UTC', at) / 60_000);
  const sign = offsetMinutes < 0 ? '-' : '+';
  const hours = String(Math.floor(Math.abs(offsetMinutes) / 60)).padStart(2, '0');
  const minutes = String(Math.abs(offsetMinutes) % 60).padStart(2, '0');
  return { at: new Date(at).toISOString(), offset: `${sign}${hours}:${minutes}` };
}

/** Where a timer's due times start: a pending trigger's, the armed due and the slot after which the schedule goes on. */
interface DueSequence {
  trigger?: number;
  first: number;
  slot: number;
  backfill?: ArmedState['backfill'];
  /** the backend's now: slots gone past by then do not come (stepFrom) */
  now?: number;
  /** a run of the armed slot goes on under overlap 'buffer-one': the first slot that came meanwhile runs after it */
  buffered?: boolean;
}

/**
 * The due times in the order they run: a pending trigger's, the armed due, a backfill's other slots and
 * the slot it goes back to, then the due of each following slot; none after endAt, at most `remaining`.
 */
function dueTimes(
  timer: SlotTimer,
  { trigger, first, slot: from, backfill, now, buffered }: DueSequence,
  remaining: number | undefined,
  count: number,
): number[] {
  const limit = Math.min(count, Math.max(0, remaining ?? count));
  const times = trigger === undefined ? [first] : [trigger, first];
  let slot: number | null = from;
  if (backfill) {
    times.push(...backfill.rest, backfill.moved ? backfill.resume : dueOfSlot(timer, backfill.resume));
    slot = backfill.resume;
  }
  // a one-shot runs at its due (and a trigger's run before it): no slot follows
  if (timer.kind === 'once') return times.slice(0, limit);
  while (times.length < limit) {
    // the slot after a buffer-one run's own is kept, however late (§3.3a); the ones after it, not. A run
    // is taken to end at once: a jitter longer than a cron's gap between slots passes the slots before its due
    const after = Math.max(now ?? -Infinity, times[times.length - 1]);
    slot = slotAfter(timer, buffered && times.length === 1 ? slot : stepFrom(timer, slot, after));
    if (slot !== null && hasSlotPolicy(timer)) slot = slotThatRuns(timer, slot);
    if (slot === null || slot > (timer.endAt ?? Infinity)) break;
    times.push(dueOfSlot(timer, slot));
  }
  return times.slice(0, limit);
}

/**
 * The slot that runs when `slot`'s wake comes at its due: one its policy passes as late there (lateSlot:
 * catchup 'skip' when its successor came first — a jitter longer than the cron's gap — or a catchupWindow
 * shorter than its jitter) gives way to the one the policy arms, as FirePath and the Redis claim do; null
 * when none runs (the timer ends, or none of the next 1,000 would).
 */
function slotThatRuns(timer: SlotTimer, first: number): number | null {
  let slot: number | null = first;
  for (let tries = 0; slot !== null && tries < 1000; tries++) {
    const late = lateSlot(timer, slot, dueOfSlot(timer, slot));
    if (!late) return slot;
    slot = late.next;
  }
  return null;
}

/**
 * Where the slot after a run of `slot` is looked for when that slot is gone past by `now` (a late run, or
 * one going on; or the run's own due, past its slot): after now, the slots between skipped (§3.3) — or,
 * with catchup 'all', the next slot inside its window, each run in turn (§3.3c: slotAfterRun).
 */
function stepFrom(timer: SlotTimer, slot: number, now: number | undefined): number {
  if (now === undefined || slot >= now) return slot;
  if (timer.catchup !== 'all') return now;
  return Math.max(slot, now - (timer.catchupWindow ?? DEFAULT_ALL_WINDOW_MS) - 1);
}

/**
 * The slot an armed due stands for: the slot whose jitter moved it there, or the due itself (no jitter,
 * or a due that is no slot's: a trigger, reschedule, retry or backfill due).
 */
function slotOfDue(timer: Timer, due: number): number {
  if (!timer.jitter || timer.kind === 'once') return due;
  // The slots in (due − jitter, due]: the one moved to `due` (jitter < every: an interval has one).
  let slot = slotAfter(timer, due - timer.jitter);
  for (let tries = 0; slot !== null && slot <= due && tries < 1000; tries++) {
    if (dueOfSlot(timer, slot) === due) return slot;
    slot = slotAfter(timer, slot);
  }
  return due;
}
