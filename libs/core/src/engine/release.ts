import { nextCronSlot } from '../cron';
import type { Skips } from '../schedule';
import { hasSlotPolicy, slotAfter, slotAfterRun } from '../slot-policy';
import type { TimerEnd } from '../types';
import type { Entry, Run } from './entry';

// Why a file of its own: what a held run's end arms next (backfill, slot policy, cron, buffer-one) is a
// decision apart from claiming, running and settling runs (FirePath). It acts only through the few
// FirePath steps it is given, so FirePath stays the one owner of versions and wakes.

/**
 * A release's answer: why the timer ended unasked — no slot comes after the run (§3.3), its next is after
 * endAt (§3.3c), or it was the last run maxRuns allows — or undefined when it did not.
 */
type Ended = TimerEnd | undefined;

/** The FirePath steps a release acts through. */
export interface ReleaseSteps {
  arm(entry: Entry, dueAt: number, slot?: number): void;
  armSlot(entry: Entry, slot: number): void;
  nextDue(entry: Entry, now: number): number;
  slotAfter(entry: Entry, now: number): number | null;
  skipsOf(entry: Entry, from: number, started: number, now: number, next: number | null): Skips;
  emitSkips(run: Pick<Run, 'id' | 'key' | 'version' | 'kind'>, skips: Skips): void;
  finish(entry: Entry, outcome: 'completed' | 'failed'): void;
}

/** The timer has run as often as `maxRuns` allows. */
export function exhausted(entry: Entry): boolean {
  return entry.maxRuns !== undefined && entry.runCount >= entry.maxRuns;
}

/**
 * A held run ended: the timer finishes, or arms what comes next (unless `pause`: pauseAfterFailures then
 * pauses it). Returns why it ended, if it did so unasked.
 */
export function release(
  path: ReleaseSteps,
  entry: Entry,
  run: Run,
  failed: boolean,
  now: number,
  pause: boolean,
): Ended {
  const endsHere = entry.kind === 'once' || (failed && entry.kind === 'interval' && entry.awaitTask);
  // The last run maxRuns allows ends the timer whatever comes next (no slot, endAt, a failed interval
  // run), and says so: maxRuns wins (docs/spec.md §3.9). complete.lua decides the same way.
  if (exhausted(entry)) {
    path.finish(entry, entry.last?.status === 'ok' ? 'completed' : 'failed');
    return 'max-runs';
  }
  if (!run.triggered && endsHere) {
    path.finish(entry, entry.last?.status === 'ok' ? 'completed' : 'failed');
  } else if (run.triggered) {
    // The schedule did not move: a due time that passed meanwhile runs at once, late.
    path.arm(entry, entry.dueAt, entry.slot);
  } else if (entry.backfill) {
    // (with `pause` nothing is armed: the pause ends the backfill, as complete.lua's)
    if (!pause) nextBackfill(path, entry, entry.backfill);
  } else if (hasSlotPolicy(entry)) {
    return armAfterSlot(path, entry, run, now, pause);
  } else if (entry.kind === 'cron') {
    return armAfterCronRun(path, entry, run, now, pause);
  } else {
    const next = path.nextDue(entry, now);
    armOrBuffer(path, entry, run, next, now, pause);
  }
  return undefined;
}

/** A backfill runs its slots one after another, each due at its slot; then the schedule goes on. */
function nextBackfill(path: ReleaseSteps, entry: Entry, backfill: NonNullable<Entry['backfill']>): void {
  const next = backfill.rest.shift();
  if (next !== undefined) return path.arm(entry, next);
  entry.backfill = null;
  // the run reschedule moved, or a retry, goes back to its own due: no slot, so no jitter, never passed as late
  if (backfill.moved) path.arm(entry, backfill.resume);
  else path.armSlot(entry, backfill.resume);
  // its try and where its skips count from, as before the backfill (a retry is no moved run)
  [entry.attempt, entry.countFrom] = [backfill.attempt, backfill.countFrom];
  entry.moved = backfill.moved && backfill.attempt === 1;
}

/**
 * A policy timer's run ended: the slot rule picks what comes next, or ends the timer (docs/spec.md
 * §3.3c); overlap 'buffer-one' and `pause` as in armOrBuffer.
 */
function armAfterSlot(path: ReleaseSteps, entry: Entry, run: Run, now: number, pause: boolean): Ended {
  const step = slotAfterRun(entry, run.countFrom, run.started, now);
  const kept = entry.overlap === 'buffer-one' && !pause ? step.firstOverlap : undefined;
  const buffered = kept !== undefined && kept <= (entry.endAt ?? Infinity) ? kept : undefined;
  if (buffered !== undefined) {
    step.overlap -= 1;
    step.firstOverlap = slotAfter(entry, buffered) ?? undefined;
  }
  path.emitSkips(run, step);
  const slot = buffered ?? step.next;
  if (slot === null) {
    path.finish(entry, entry.last?.status === 'ok' ? 'completed' : 'failed');
    return step.ended;
  }
  if (pause) return undefined;
  path.armSlot(entry, slot);
  if (buffered !== undefined) entry.countFrom = now;
  return undefined;
}

/** The slots after the run's due up to now are skipped (counted, by reason); none left ends the timer. */
function armAfterCronRun(path: ReleaseSteps, entry: Entry, run: Run, now: number, pause: boolean): Ended {
  const next = nextCronSlot(entry.cron!, entry.tz!, now);
  if (armOrBuffer(path, entry, run, next, now, pause)) return undefined;
  path.finish(entry, entry.last?.status === 'ok' ? 'completed' : 'failed');
  return 'no-next-slot';
}

/**
 * Counts the slots the run went past and arms `next`. With overlap 'buffer-one' the first slot that came
 * while it ran is armed instead (due at once, with its own due) and the others are skipped; its run counts
 * from now on. With `pause` nothing is armed (the caller pauses the timer). False: no slot is left.
 */
function armOrBuffer(
  path: ReleaseSteps,
  entry: Entry,
  run: Run,
  next: number | null,
  now: number,
  pause: boolean,
): boolean {
  const skips = path.skipsOf(entry, run.countFrom, run.started, now, next);
  const buffered = entry.overlap === 'buffer-one' && !pause ? skips.firstOverlap : undefined;
  if (buffered !== undefined) {
    skips.overlap -= 1;
    skips.firstOverlap = path.slotAfter(entry, buffered) ?? undefined;
  }
  path.emitSkips(run, skips);
  const due = buffered ?? next;
  if (due === null) return false;
  if (pause) return true;
  path.arm(entry, due);
  if (buffered !== undefined) entry.countFrom = now;
  return true;
}
