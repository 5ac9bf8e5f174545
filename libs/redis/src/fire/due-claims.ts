import type { ClaimResult } from '../store/claim-reply';
import type { TimerRef } from '../store/fire-commands';
import type { ClaimCalls } from './claim-rides';
import { type ClaimSlotContext, passIfLate } from './claim-slots';
import type { RunFlight } from './run-flight';
import type { ClaimTimes } from './run-timing';

// Why a file of its own: when to claim a fire job's timers (each at its due, calls overlapping) is a loop
// with its own state; what a claimed timer becomes (a run, its lease, its completion) is the runner's.

/** The longest a job that arrived before its due is held to claim its timers (it also bounds a close). */
const MAX_EARLY_WAIT_MS = 1000;
/**
 * Claim calls on their way at once per MAX_CLAIM timers of a job. A timer falling due while a claim is on
 * its way goes in a call of its own at once rather than after that answer: on a busy host a round trip
 * takes longer than the gap between dues (1 ms at 1,000/s), and a timer waiting for the answer before its
 * own claim was late by both round trips. Redis answers the second right after the first. Two, not more:
 * a stalled Redis or event loop is not sent a call per millisecond, each with its fixed cost (~85 µs of
 * Redis). Per MAX_CLAIM timers, because a job of 500 (five take-due calls') stands for the five jobs of
 * 100 it replaced: in a backlog, where all of them are due at once, two calls of 100 at a time left the
 * worker waiting on round trips (fire throughput 1.41× → 0.84× in a quick bench).
 */
const CLAIMS_IN_FLIGHT = 2;
/**
 * Timers one claim call takes at most: a job carries up to 500 (dispatcher.ts CALLS_PER_JOB), and in a
 * backlog all of them are due at once — a call of them would hold Redis ~5× as long (~13 µs a timer)
 * as the dispatcher's 100 a job did before, while the claims of other jobs waited behind it.
 */
const MAX_CLAIM = 100;

export interface DueClaimsContext {
  partition: number;
  /** claims on the claim connection (with the completions that ride on them) */
  claims: ClaimCalls;
  slots: ClaimSlotContext;
  /** Redis's clock as seen from here */
  clock: { now(): number };
  leaseMs: number;
  /** how long before its due (Redis's clock) a timer's claim goes; Redis accepts it that far ahead at most */
  aheadMs: number;
  /** true once a close's grace is over: the unclaimed rest stays armed (the reconciler arms it again) */
  stopped(): boolean;
  /**
   * the handlers this worker lacks that a live worker of the partition has (handler-presence.ts), or
   * undefined (the normal path): with some, every timer of the job is claimed at once, so one of them is
   * passed on (claim.lua 'passed') as soon as the job arrives, a lead before its due
   */
  lacking?: readonly string[];
  /** a timer's final claim answer (claimed, lost, stale or passed), with when its call went and how many it took */
  settle(result: ClaimResult, ref: TimerRef, times: ClaimTimes, claimCalls: number): void;
  /** the runner's timers waiting on Redis: a call goes only while there is room (RUN_FLIGHT_LIMIT) */
  flight?: RunFlight;
}

/** A timer of a fire job still to claim: at `at` on Redis's clock (its due − aheadMs), after `calls` claim calls. */
interface Waiting {
  ref: TimerRef;
  at: number;
  calls: number;
}

/**
 * Claims a fire job's timers as they fall due. The dispatcher hands jobs over a little before their
 * timers are due, so each timer is claimed between `aheadMs` and `aheadMs` / 2 before its due by our
 * estimate of Redis's clock (sendInstant) — everything claimable by then in one call, up to
 * CLAIMS_IN_FLIGHT calls at once — and its answer is back by the due: the round trip is not part of the run's lateness. Never early: the claim
 * checks Redis's own clock (a timer further than `aheadMs` ahead waits the remainder it reports), and a
 * claimed run's answer says how long until its due (`leftMs`), which the runner waits before its handler
 * starts. A timer due more than MAX_EARLY_WAIT_MS ahead (a clock jump, a job added by hand) is dropped:
 * it stays armed without a job, and the reconciler arms it again. Rejects with the first failed call's
 * error once the calls on their way have settled.
 */
export async function claimAtDue(refs: TimerRef[], context: DueClaimsContext): Promise<void> {
  const arrivedAt = Date.now();
  const { aheadMs, lacking } = context;
  // (lacking handlers: claimed now; Redis answers 'early' for those it does not pass, and they wait)
  const from = lacking ? context.clock.now() : Infinity;
  // by `at`, so each wake takes a prefix: no arrays rebuilt per wake (at 1,000/s a job wakes every ms)
  const waiting: Waiting[] = refs
    .map((ref) => ({ ref, at: Math.min(from, ref.due - aheadMs), calls: 0 }))
    .sort(byAt);
  const inFlight = new Set<Promise<void>>();
  const callsAtOnce = CLAIMS_IN_FLIGHT * Math.ceil(refs.length / MAX_CLAIM);
  const wake = new Wake();
  const woken = (): void => wake.now();
  let failure: { error: unknown } | undefined;
  while ((waiting.length > 0 || inFlight.size > 0) && !failure && !context.stopped()) {
    const now = context.clock.now();
    while (waiting.length > 0 && waiting[waiting.length - 1].at - now > MAX_EARLY_WAIT_MS) waiting.pop();
    const canSend =
      inFlight.size < callsAtOnce &&
      waiting.length > 0 &&
      (context.flight?.room(context.partition, woken) ?? true);
    const sendAt = canSend ? sendInstant(waiting, aheadMs) : Infinity;
    if (sendAt > now) {
      if (waiting.length === 0 && inFlight.size === 0) break; // the rest was too far ahead
      // until the next call is due, or until a call answers (it frees a slot, or finds timers still early)
      await wake.sleep(sendAt - now);
      continue;
    }
    let due = 0;
    while (due < Math.min(waiting.length, MAX_CLAIM) && waiting[due].at <= now) due++;
    const call = claimCall(waiting.splice(0, due), arrivedAt, context)
      .then(
        (early) => early.forEach((entry) => insertByAt(waiting, entry)),
        (error: unknown) => void (failure ??= { error }),
      )
      .finally(() => {
        inFlight.delete(call);
        wake.now();
      });
    inFlight.add(call);
  }
  await Promise.all(inFlight);
  if (failure) throw failure.error;
}

/**
 * One claim call of `ready`: settles what it claimed, passes the late slots a policy skips (claim.lua
 * 'check') and claims the rest of those at once; returns the timers Redis still found early.
 */
async function claimCall(ready: Waiting[], arrivedAt: number, context: DueClaimsContext): Promise<Waiting[]> {
  const { partition, leaseMs, slots, aheadMs, lacking } = context;
  const early: Waiting[] = [];
  const checks: Promise<Waiting | null>[] = [];
  let answeredAt = 0;
  const take = (result: ClaimResult, entry: Waiting, times: ClaimTimes): void => {
    const calls = ++entry.calls;
    if (result.kind === 'early') early.push({ ref: entry.ref, at: answeredAt + result.waitMs, calls });
    else if (result.kind === 'check')
      checks.push(passIfLate(slots, partition, result, entry.ref, answeredAt).then((on) => on && entry));
    else context.settle(result, entry.ref, times, calls);
  };
  // One claim call of `entries`, its answers taken. Wall clock for the spans of traced runs and the run
  // timings; the answer's monotonic tick, for a run claimed ahead to start at its due.
  const send = async (entries: Waiting[], slotsChecked: boolean): Promise<void> => {
    const times = {
      arrivedAt,
      claimSentAt: Date.now(),
      claimAnsweredAt: 0,
      sentTick: performance.now(),
      answeredTick: 0,
    };
    const refs = refsOf(entries);
    context.flight?.add(partition, refs.length);
    const results = await context.claims
      .claim(partition, leaseMs, slots.workerId, refs, slotsChecked, aheadMs, lacking)
      .finally(() => context.flight?.done(partition, refs.length));
    times.answeredTick = performance.now();
    times.claimAnsweredAt = Date.now();
    answeredAt = context.clock.now();
    results.forEach((result, i) => take(result, entries[i], times));
  };
  await send(ready, false);
  // Most calls have no slot to check: no wait, so their answer is not held a microtask turn longer.
  if (checks.length === 0) return early;
  // Slots a policy may skip: the late ones are passed, the rest claimed now.
  const onTime = (await Promise.all(checks)).filter((entry) => entry !== null);
  if (onTime.length > 0) await send(onTime, true);
  return early;
}

/**
 * When the next claim call of `waiting` (by `at`) goes, on Redis's clock: once its first timer's lead is
 * down to half of `aheadMs`, or sooner once every timer that would join it by then is in the window
 * (at 100/s none does: the timer goes at its full lead). Why not at the first timer's `at`, as with `aheadMs` 0: a call carries what is in the
 * window when it goes, and a call each time a timer entered it carried ~9 timers in bench scenario 7
 * (10,000/s; ~6 commands a call: FCALL, TIME, ZMSCORE, PUBLISH, ZREM, ZADD) — most of a fired timer's
 * per-call commands were the claim's. Waiting out half the window, a call carries up to half a window
 * of dues (~14 in scenario 7), a job's calls go about every `aheadMs` / 2, and every claim still goes at
 * least `aheadMs` / 2 before its due (2.5 ms by default, above a claim's round trip as a rule), never
 * after it. No state
 * across calls: a timer Redis found early comes back with its own `at` and waits the same way. With
 * `aheadMs` 0 this is the first timer's `at`: each timer is claimed at its due, as before.
 */
function sendInstant(waiting: Waiting[], aheadMs: number): number {
  const latest = waiting[0].at + aheadMs / 2;
  let last = 0;
  while (last + 1 < Math.min(waiting.length, MAX_CLAIM) && waiting[last + 1].at <= latest) last++;
  return waiting[last].at;
}

function refsOf(entries: Waiting[]): TimerRef[] {
  return entries.map((entry) => entry.ref);
}

function byAt(a: Waiting, b: Waiting): number {
  return a.at - b.at;
}

function insertByAt(waiting: Waiting[], entry: Waiting): void {
  let i = waiting.length;
  while (i > 0 && waiting[i - 1].at > entry.at) i--;
  waiting.splice(i, 0, entry);
}

/** A sleep that a claim's answer can end early: one local timer at most, cleared when woken. */
class Wake {
  private resolve: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.resolve = resolve;
      if (ms !== Infinity) this.timer = setTimeout(() => this.now(), ms);
    });
  }

  now(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const resolve = this.resolve;
    this.resolve = undefined;
    resolve?.();
  }
}
