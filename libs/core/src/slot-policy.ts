import { cronSlotCount, nextCronOccurrence, nextCronSlot } from './cron';
import { fnv1a32 } from './fnv1a32';
import { refusals } from './refusals';
import { nextGridSlot } from './schedule';
import type { NormalizedSpec, SlotPolicy, TimerEnd, TimerKind } from './types';

/*
 * The slot policies of periodic timers (docs/spec.md §3.3c): catch-up after downtime, jitter, start and
 * end, backfill. One rule for both backends: the engine's FirePath and the Redis worker call these, and
 * the Lua scripts only store what they return (jitter excepted: includes/slots.lua has the same hash).
 */

/** What the rules read of a timer: its schedule, its grid anchor (`scheduledAt`) and its policies. */
export interface SlotTimer extends SlotPolicy {
  key: string;
  kind: TimerKind;
  scheduledAt: number;
  everyMs?: number;
  cron?: string;
  tz?: string;
}

/** `catchup: 'all'` without a catchupWindow catches up at most this far back. */
export const DEFAULT_ALL_WINDOW_MS = 86_400_000;
/** The most slots one backfill call runs. */
export const MAX_BACKFILL_SLOTS = 1000;

/**
 * Why a slot rule ended a timer: its next slot is after `endAt`, or none comes. (Never `max-runs`: the
 * run that reaches maxRuns ends its timer before any slot rule is asked, core release / complete.lua.)
 */
export type SlotEnd = Exclude<TimerEnd, 'max-runs'>;

/** What comes after a slot: the next one (null when the timer ends, and why) and the slots gone past. */
export interface SlotStep {
  next: number | null;
  ended?: SlotEnd;
  missed: number;
  overlap: number;
  firstMissed?: number;
  firstOverlap?: number;
}

/**
 * Whether the timer has a policy that changes how its slots run: then the slot rule below steps it. startAt
 * counts: a run moved before it (reschedule) is followed by no slot before it (docs/spec.md §3.3c).
 */
export function hasSlotPolicy(timer: SlotPolicy): boolean {
  return (
    timer.catchup !== undefined ||
    timer.startAt !== undefined ||
    timer.catchupWindow !== undefined ||
    timer.jitter !== undefined ||
    timer.endAt !== undefined
  );
}

/**
 * A slot's deterministic delay in [0, jitter): FNV-1a of `key|slot` mod jitter, the same on every
 * replica and both backends (includes/slots.lua computes the same number).
 */
export function jitterOf(key: string, slot: number, jitter: number | undefined): number {
  return jitter ? fnv1a32(`${key}|${slot}`) % jitter : 0;
}

/** When a slot is due: the slot moved by its jitter, never earlier. */
export function dueOfSlot(timer: Pick<SlotTimer, 'key' | 'jitter'>, slot: number): number {
  return slot + jitterOf(timer.key, slot, timer.jitter);
}

/** The timer's first slot strictly after `after` and not before its startAt, or null when a cron has none left. */
export function slotAfter(timer: SlotTimer, after: number): number | null {
  after = fromStart(timer, after);
  if (timer.kind === 'interval') return nextGridSlot(timer.scheduledAt, timer.everyMs!, after);
  if (timer.kind === 'cron') return nextCronSlot(timer.cron!, timer.tz!, after);
  return null;
}

/**
 * The first slot of a new periodic timer created at `now`: one interval after now, or the next cron
 * occurrence, and not before `startAt`. Refused when it comes after `endAt`: the timer would never run.
 */
export function firstSlot(spec: NormalizedSpec, now: number): number {
  const after = fromStart(spec, now);
  const slot =
    spec.kind === 'interval'
      ? nextGridSlot(now, spec.everyMs!, after)
      : nextCronOccurrence(spec.cron!, spec.tz!, after);
  if (spec.endAt !== undefined && slot > spec.endAt) {
    throw refusals.endsBeforeStart(
      `${new Date(spec.endAt).toISOString()} comes before the first slot, ${new Date(slot).toISOString()}`,
    );
  }
  return slot;
}

/**
 * Where a look for a timer's next slot after `now` starts: no slot comes before `startAt` (docs/spec.md
 * §3.3c) — for a new timer, one resumed before it, and the slots after a run moved before it (slotAfter,
 * countSlots). includes/time.lua next_grid_slot and grid_skips do the same.
 */
export function fromStart(timer: Pick<SlotPolicy, 'startAt'>, now: number): number {
  return Math.max(now, (timer.startAt ?? -Infinity) - 1);
}

/**
 * A slot found late when its wake comes at `now` (docs/spec.md §3.3c): null when it runs; otherwise the
 * slots not run (missed) and the slot to arm instead. `skip` runs no slot once a later one has come;
 * every policy skips slots older than `now − catchupWindow` and moves to the first one inside it.
 */
export function lateSlot(timer: SlotTimer, slot: number, now: number): SlotStep | null {
  if (timer.catchup === 'skip') {
    // a successor after endAt is none of the timer's: the slot before it is its last, which runs however late
    const successor = slotAfter(timer, slot);
    if (successor !== null && successor <= now && successor <= (timer.endAt ?? Infinity)) {
      return bounded(timer, slotAfter(timer, now), missedOnly(countSlots(timer, slot - 1, now)));
    }
  }
  const cut = now - windowOf(timer);
  if (slot >= cut) return null;
  return bounded(timer, slotAfter(timer, cut - 1), missedOnly(countSlots(timer, slot - 1, cut - 1)));
}

/**
 * What follows the run of `slot`, started at `started`, ended at `now`. `all` arms the next slot while it
 * was already due when the run started (a catch-up, inside the window); otherwise the next slot is the
 * first after now and the slots in between are skipped: missed up to `started`, overlap after it (the
 * rule afterCronRun and gridSkips follow). A next slot after `endAt` ends the timer: 'ended'.
 */
export function slotAfterRun(timer: SlotTimer, slot: number, started: number, now: number): SlotStep {
  if (timer.catchup === 'all') {
    const cut = now - windowOf(timer);
    let next = slotAfter(timer, slot);
    let outside: SlotCount = { count: 0 };
    if (next !== null && next < cut) {
      outside = countSlots(timer, slot, cut - 1);
      next = slotAfter(timer, cut - 1);
    }
    if (next !== null && next <= started) return bounded(timer, next, missedOnly(outside));
  }
  const missed = countSlots(timer, slot, Math.min(started, now));
  const overlap = countSlots(timer, Math.max(started, slot), now);
  return bounded(timer, slotAfter(timer, now), {
    missed: missed.count,
    overlap: overlap.count,
    ...(missed.first !== undefined && { firstMissed: missed.first }),
    ...(overlap.first !== undefined && { firstOverlap: overlap.first }),
  });
}

/**
 * The slots of `[from, to]` a backfill runs, in order, none before startAt nor after endAt; refused when the
 * range is not a past range, ends before startAt, starts after endAt or holds more than MAX_BACKFILL_SLOTS slots. A timer with `maxRuns` runs only the first slots its runs
 * left allow: the run that reaches it ends the timer, so a later slot would never run.
 */
export function backfillSlots(
  timer: SlotTimer & { maxRuns?: number; runCount?: number },
  from: number,
  to: number,
  now: number,
): number[] {
  if (from > to) {
    throw refusals.badBackfillRange(
      'to',
      `to ${new Date(to).toISOString()} is before from ${new Date(from).toISOString()}`,
      'Write from before to, e.g. { from: "2026-03-01T00:00:00Z", to: "2026-03-02T00:00:00Z" }.',
    );
  }
  if (to > now) {
    throw refusals.badBackfillRange(
      'to',
      `to ${new Date(to).toISOString()} is in the future (now is ${new Date(now).toISOString()})`,
      'Backfill runs slots that have passed: write a to that is not after now; future slots run on their own.',
    );
  }
  if (timer.startAt !== undefined && to < timer.startAt) {
    // no slot of the timer comes before startAt (§3.3c): a range before it asks for runs that never were
    throw refusals.badBackfillRange(
      'range',
      `the range ends before startAt ${new Date(timer.startAt).toISOString()}: this timer has no slots before it`,
      'Backfill a range that reaches startAt or later, or replace the timer with an earlier startAt.',
    );
  }
  if (timer.endAt !== undefined && from > timer.endAt) {
    // nor after endAt (§3.3c): a timer can outlive it pending (a run moved past it, a retry, a late wake)
    throw refusals.badBackfillRange(
      'range',
      `the range starts after endAt ${new Date(timer.endAt).toISOString()}: this timer has no slots after it`,
      'Backfill a range that starts at endAt or earlier; its slots after endAt are not run.',
    );
  }
  const last = Math.min(to, timer.endAt ?? Infinity);
  const slots: number[] = [];
  // An interval's grid reaches back before its creation (anchor + k·every, any whole k) for a backfill.
  const after = (slot: number): number | null =>
    timer.kind === 'interval'
      ? timer.scheduledAt + (Math.floor((slot - timer.scheduledAt) / timer.everyMs!) + 1) * timer.everyMs!
      : slotAfter(timer, slot);
  for (let slot = after(fromStart(timer, from - 1)); slot !== null && slot <= last; slot = after(slot)) {
    if (slots.length === MAX_BACKFILL_SLOTS) {
      throw refusals.badBackfillRange(
        'range',
        `the range holds more than ${MAX_BACKFILL_SLOTS} slots of this timer`,
        `Backfill at most ${MAX_BACKFILL_SLOTS} slots per call: split the range into smaller ones.`,
      );
    }
    slots.push(slot);
  }
  return timer.maxRuns === undefined
    ? slots
    : slots.slice(0, Math.max(0, timer.maxRuns - (timer.runCount ?? 0)));
}

interface SlotCount {
  count: number;
  first?: number;
}

/**
 * Slots s with from < s ≤ before (a cron's each counted, as afterCronRun does: cronSlotCount); none
 * before `startAt` or after `endAt`: the timer has no slot there to skip.
 */
function countSlots(timer: SlotTimer, from: number, before: number): SlotCount {
  // nor before startAt: a run moved before it went past no slot of the timer
  const after = fromStart(timer, from);
  const upTo = Math.min(before, timer.endAt ?? Infinity);
  if (upTo <= after) return { count: 0 };
  if (timer.kind === 'interval') {
    const anchor = timer.scheduledAt;
    const every = timer.everyMs!;
    const low = Math.max(1, Math.floor((after - anchor) / every) + 1);
    const high = Math.floor((upTo - anchor) / every);
    return high < low ? { count: 0 } : { count: high - low + 1, first: anchor + low * every };
  }
  const first = slotAfter(timer, after);
  if (first === null || first > upTo) return { count: 0 };
  return { count: cronSlotCount(timer.cron!, timer.tz!, after, upTo), first };
}

function windowOf(timer: SlotPolicy): number {
  return timer.catchupWindow ?? (timer.catchup === 'all' ? DEFAULT_ALL_WINDOW_MS : Infinity);
}

function missedOnly({ count, first }: SlotCount): Omit<SlotStep, 'next'> {
  return { missed: count, overlap: 0, ...(first !== undefined && { firstMissed: first }) };
}

function bounded(timer: SlotPolicy, next: number | null, skips: Omit<SlotStep, 'next'>): SlotStep {
  if (next === null) return { ...skips, next, ended: 'no-next-slot' };
  if (timer.endAt !== undefined && next > timer.endAt) return { ...skips, next: null, ended: 'ended' };
  return { ...skips, next };
}
