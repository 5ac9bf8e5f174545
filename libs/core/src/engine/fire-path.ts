import type { Ledger } from './ledger';
import type { Clock } from '../clock';
import { liveCronSlot, nextCronSlot } from '../cron';
import { describeFailure } from '../failure';
import { refusals } from '../refusals';
import { retryDelay } from '../run-policies';
import { withTimeout } from '../run-timeout';
import { afterCronRun, gridSkips, nextGridSlot, type Skips } from '../schedule';
import { dueOfSlot, hasSlotPolicy, lateSlot, slotAfter, slotAfterRun, type SlotStep } from '../slot-policy';
import type { TimerContext, TimerEvent, TimerHandler, TimerKind } from '../types';
import { slotToJudge, toTimer, type Entry, type Run } from './entry';
import type { EntryStore } from './entry-store';
import type { EventHub } from './events';
import type { Outbox } from './outbox';
import { exhausted, release, type ReleaseSteps } from './release';
import { RunDrain } from './run-drain';

export type CancelReason = 'cancelled' | 'replaced' | 'reset' | 'disposed';

type RunError = NonNullable<TimerEvent['error']>;

export interface FirePathDeps {
  clock: Clock;
  store: EntryStore;
  events: EventHub;
  /** listener calls and aborts wait here until the engine operation that set them off is done */
  outbox: Outbox;
  /** looked up at each run, so a handler added to the object later is found */
  handlers: Readonly<Record<string, TimerHandler>>;
  /** every event is also its timer's ledger entry */
  ledger: Ledger;
}

/**
 * Arms, fires, runs and settles timers. Every wake carries the `(id, key, version)` it was armed for
 * and every run its own identity: a wake or a completion that no longer matches the live entry is
 * stale and changes nothing (docs/spec.md §3.2, §3.5).
 */
export class FirePath implements ReleaseSteps {
  /** the handlers executing; once draining (a dispose with a grace), no wake starts a run */
  readonly drain = new RunDrain();
  /** while a run settles: its skips, emitted after its outcome (and its retry or pause), as on Redis */
  private deferredSkips: (() => void)[] | null = null;

  constructor(private readonly deps: FirePathDeps) {}

  /**
   * Arms the entry's next wake at `dueAt` under a fresh version, withdrawing any earlier wake. `slot` is
   * the slot that due stands for (jitter moves a due past its slot: armSlot).
   */
  arm(entry: Entry, dueAt: number, slot = dueAt): void {
    this.withdraw(entry);
    entry.version += 1;
    entry.dueAt = dueAt;
    entry.slot = slot;
    this.setWake(entry, entry.version);
  }

  /** Arms a periodic timer's slot at its jittered due (docs/spec.md §3.3c). */
  armSlot(entry: Entry, slot: number): void {
    this.arm(entry, dueOfSlot(entry, slot), slot);
  }

  /** A periodic timer's next slot after `now` (resume), or `invalid` for a cron with none left. */
  nextSlot(entry: Entry, now: number): number {
    return entry.kind === 'cron' ? liveCronSlot(entry.cron!, entry.tz!, now) : slotAfter(entry, now)!;
  }

  withdraw(entry: Entry): void {
    if (entry.wake) this.deps.clock.clearTimeout(entry.wake);
    entry.wake = null;
  }

  /** When the timer is next due, counted from `now`: nothing missed is made up (docs/spec.md §3.3). */
  nextDue(entry: Entry, now: number): number {
    switch (entry.kind) {
      case 'once':
        return Math.max(entry.dueAt, now);
      case 'interval':
        return nextGridSlot(entry.scheduledAt, entry.everyMs!, now);
      case 'cron':
        return liveCronSlot(entry.cron!, entry.tz!, now);
    }
  }

  /** Free runs go on but are told to stop, as when their timer is rescheduled or paused. */
  abortFreeRuns(entry: Entry): void {
    for (const run of entry.runs) if (run.free) this.abortLater(run);
  }

  /**
   * Claims the entry and runs its handler. A free run (a tick of a periodic timer that does not await its
   * task — overlap 'allow' or 'cancel-other' — unless it is the last one `maxRuns` allows) arms the next
   * slot now; every other run holds the timer until it settles. A retry is its slot's run again: it does
   * not count in runCount.
   */
  start(entry: Entry, due: number, triggered: boolean): void {
    const now = this.deps.clock.now();
    const attempt = triggered ? 1 : entry.attempt;
    // Slots up to here were counted: a retry's or a buffered slot's run counts after the run before it, a
    // run moved to a past due after its reschedule, any other from its slot (its due without jitter).
    const countFrom = triggered ? due : (entry.countFrom ?? entry.slot);
    if (!triggered) [entry.attempt, entry.countFrom, entry.moved] = [1, null, false];
    if (attempt === 1) entry.runCount += 1;
    // A free tick arms the next slot now: slots that passed since countFrom are missed, not made up. A policy
    // timer steps by the slot rule (docs/spec.md §3.3c); a tick with no next slot (none left, or past
    // endAt) is its last and holds the timer.
    const ticks =
      !triggered && entry.kind !== 'once' && !entry.awaitTask && !exhausted(entry) && entry.backfill === null;
    const step = ticks && hasSlotPolicy(entry) ? slotAfterRun(entry, countFrom, now, now) : undefined;
    const next = !ticks ? null : step ? step.next : this.slotAfter(entry, now);
    const free = next !== null;
    if (entry.overlap === 'cancel-other') this.cancelOthers(entry);
    const run: Run = {
      id: entry.id,
      key: entry.key,
      kind: entry.kind,
      version: entry.version,
      due,
      started: now,
      triggered,
      attempt,
      countFrom,
      free,
      controller: new AbortController(),
    };
    entry.runs.add(run);
    entry.latestRun = run;
    entry.lastFiredAt = now;
    entry.last = { started: now, status: 'running' };
    if (next !== null) this.armSlot(entry, next);
    this.emit('running', run, { due });
    if (next !== null) this.emitSkips(run, step ?? this.skipsOf(entry, countFrom, now, now, next));
    this.drain.track(this.execute(entry, run));
  }

  /** A free tick's next slot after `now`; null when a cron has none left (then its run holds the timer). */
  slotAfter(entry: Entry, now: number): number | null {
    return entry.kind === 'cron' ? nextCronSlot(entry.cron!, entry.tz!, now) : this.nextDue(entry, now);
  }

  /** overlap 'cancel-other': the runs still going are aborted, and their completions will be stale. */
  private cancelOthers(entry: Entry): void {
    for (const run of entry.runs) {
      run.overlapped = true;
      entry.runs.delete(run);
      this.abortLater(run);
    }
  }

  /** The slots strictly after `from` and before `next`, split at `started` (the rule of afterCronRun and gridSkips). */
  skipsOf(entry: Entry, from: number, started: number, now: number, next: number | null): Skips {
    if (entry.kind === 'cron') {
      const { next: _next, ...skips } = afterCronRun(entry.cron!, entry.tz!, from, started, now);
      return skips;
    }
    return gridSkips(entry.scheduledAt, entry.everyMs!, from, started, next ?? this.nextDue(entry, now));
  }

  /** Cancels the entry: its wake and every run in flight become stale, their signals abort. */
  cancel(entry: Entry, reason: CancelReason): void {
    this.withdraw(entry);
    entry.version += 1;
    this.deps.store.remove(entry);
    const timer = toTimer(entry, 'cancelled');
    // A cancelled name stays cancelled for `ifExists: 'keep'`; a replaced or disposed one needs no tombstone.
    if (reason === 'cancelled' || reason === 'reset') this.deps.store.bury(timer, this.deps.clock.now());
    const runs = [...entry.runs];
    entry.runs.clear();
    for (const run of runs) this.abortLater(run);
    this.emit('cancelled', entry, { reason });
    if (reason === 'cancelled' || reason === 'reset') this.deps.ledger.bury(entry.key);
  }

  emit(
    type: TimerEvent['type'],
    subject: Pick<TimerEvent, 'id' | 'key' | 'version' | 'kind'>,
    extra: Partial<TimerEvent> = {},
    entryDue = true,
  ): void {
    const { id, key, version, kind } = subject;
    const event = { type, id, key, version, kind, at: this.deps.clock.now(), ...extra };
    this.deps.ledger.record(event, entryDue);
    this.deps.outbox.later(() => this.deps.events.emit(event));
  }

  private abortLater(run: Run): void {
    this.deps.outbox.later(() => run.controller.abort());
  }

  private setWake(entry: Entry, version: number): void {
    const { id, key } = entry;
    const delay = entry.dueAt - this.deps.clock.now();
    entry.wake = this.deps.clock.setTimeout(() => this.wake(id, key, version), delay);
  }

  /**
   * The clock says `(id, key, version)` is due. Only the armed wake of the live version claims; a
   * wake for an entry that is gone, for an older version, or a second wake of one already consumed
   * is stale. No held run is ever in flight here: nothing is armed while one holds the timer.
   */
  private wake(id: string, key: string, version: number): void {
    if (this.drain.draining) return;
    const entry = this.deps.store.get(key);
    const stale = (reason: string, kind: TimerKind | null) =>
      this.emit('stale', { id, key, version, kind }, { reason });
    if (!entry || entry.id !== id) return stale('gone', null);
    if (entry.version !== version) return stale('version', entry.kind);
    if (!entry.wake) return stale('status', entry.kind);
    // A source may wake early (Node's timers can, by a millisecond): never run early, wait again.
    if (this.deps.clock.now() < entry.dueAt) return this.setWake(entry, version);
    entry.wake = null;
    const late = slotToJudge(entry) ? lateSlot(entry, entry.slot, this.deps.clock.now()) : null;
    if (late) return this.passLate(entry, late);
    this.start(entry, entry.dueAt, false);
  }

  /** A late slot (or a resume past endAt) runs not (§3.3c): counted missed; the policy's next is armed, or it ends. */
  passLate(entry: Entry, late: SlotStep): void {
    this.emitSkips(entry, late);
    if (late.next !== null) return this.armSlot(entry, late.next);
    this.finish(entry, entry.last?.status === 'failed' ? 'failed' : 'completed');
    this.emit(entry.outcome!, entry, { reason: late.ended });
  }

  /** Runs the handler, bounded by the timer's timeout (docs/spec.md §3.2); never rejects, whatever the handler does. */
  private async execute(entry: Entry, run: Run): Promise<void> {
    const { handlers, clock } = this.deps;
    const found = Object.hasOwn(handlers, entry.handler) ? handlers[entry.handler] : undefined;
    const handler =
      found && entry.timeout !== undefined
        ? withTimeout(found, entry.timeout, { name: entry.handler, clock, of: 'timer' })
        : found;
    const payload = structuredClone(entry.payload);
    const ctx: TimerContext = {
      id: run.id,
      key: run.key,
      version: run.version,
      due: run.due,
      claimedAt: run.started,
      runCount: entry.runCount,
      attempt: run.attempt,
      payload,
      signal: run.controller.signal,
      timer: toTimer(entry),
    };
    // A `running` listener may already have cancelled it: then the run is stale before it starts.
    if (!entry.runs.has(run)) return this.settle(run, undefined);
    let error: RunError | undefined;
    try {
      if (!handler) throw refusals.unknownHandler(entry.handler, 'engine', Object.keys(handlers));
      await handler(payload, ctx);
    } catch (thrown) {
      error = describeFailure(thrown);
    }
    this.settle(run, error);
  }

  private settle(run: Run, error: RunError | undefined): void {
    const entry = this.deps.store.get(run.key);
    if (!entry || entry.id !== run.id || !entry.runs.delete(run)) {
      this.emit('stale', run, { reason: run.overlapped ? 'overlap' : 'gone', due: run.due });
      return;
    }
    const now = this.deps.clock.now();
    if (entry.latestRun === run) {
      entry.last = { started: run.started, ended: now, status: error ? 'failed' : 'ok' };
      if (error) entry.last.error = error;
    }
    entry[error ? 'lastErrorAt' : 'lastCompletedAt'] = now;
    const skips: (() => void)[] = (this.deferredSkips = []);
    const retried = error !== undefined && !run.free && this.retry(entry, run, now);
    if (!retried && entry.pauseAfterFailures !== undefined) entry.failures = error ? entry.failures + 1 : 0;
    const pause = !retried && error !== undefined && entry.failures >= (entry.pauseAfterFailures ?? Infinity);
    const ended =
      run.free || retried ? undefined : release(this, entry, run, error !== undefined, now, pause);
    this.deferredSkips = null;
    const extra: Partial<TimerEvent> = { due: run.due, ...(error && { error, attempt: run.attempt }) };
    // a free run's entry has no due, as on Redis: its timer's row has moved on to the next tick
    this.emit(error ? 'failed' : 'completed', run, ended ? { ...extra, reason: ended } : extra, !run.free);
    if (run.free && entry.outcome) this.removeEnded(entry); // outlived its timer's end
    if (retried) this.deps.ledger.retried(this.deps.clock.now(), entry);
    if (pause && !entry.outcome && !entry.paused) this.pauseForFailures(entry);
    for (const emit of skips) emit();
  }

  /**
   * A failed held run with tries left (`retry`, docs/spec.md §3.3b): its slot runs again after the backoff,
   * under a new version. The slots it went past are counted now; the retry counts from here on.
   */
  private retry(entry: Entry, run: Run, now: number): boolean {
    const { retry } = entry;
    if (!retry || run.triggered || run.attempt >= retry.attempts) return false;
    // a backfill slot's run skips nothing (docs/spec.md §3.3c): its retry is that slot's run again
    const skips =
      entry.kind === 'once' || entry.backfill !== null
        ? null
        : hasSlotPolicy(entry)
          ? slotAfterRun(entry, run.countFrom, run.started, now)
          : this.skipsOf(entry, run.countFrom, run.started, now, null);
    if (skips) this.emitSkips(run, skips);
    this.arm(entry, now + retryDelay(retry, run.attempt));
    [entry.attempt, entry.countFrom] = [run.attempt + 1, now];
    return true;
  }

  /** pauseAfterFailures reached: paused as `pause(key)` would, and says why (docs/spec.md §3.3b). */
  private pauseForFailures(entry: Entry): void {
    this.abortFreeRuns(entry);
    this.withdraw(entry);
    entry.version += 1;
    entry.paused = true;
    // as pause(key): a backfill in progress ends here
    entry.backfill = null;
    this.emit('paused', entry, { reason: 'failures', count: entry.failures });
  }

  /** One `skipped` event per reason that has slots; `due` is the first of them (docs/spec.md §3.6). */
  emitSkips(run: Pick<Run, 'id' | 'key' | 'version' | 'kind'>, skips: Skips): void {
    const { missed, overlap, firstMissed, firstOverlap } = skips;
    const emit = () => {
      if (missed > 0) this.emit('skipped', run, { reason: 'missed', due: firstMissed, count: missed });
      if (overlap > 0) this.emit('skipped', run, { reason: 'overlap', due: firstOverlap, count: overlap });
    };
    if (this.deferredSkips) this.deferredSkips.push(emit);
    else emit();
  }

  /** The timer ends; removed (removeEnded) once no free run of it goes on. */
  finish(entry: Entry, outcome: 'completed' | 'failed'): void {
    this.withdraw(entry);
    entry.outcome = outcome;
    this.deps.store.retire(entry);
    this.removeEnded(entry);
  }

  /**
   * An ended timer removed by removeOnComplete, once its last run in flight has ended: a free run still
   * going records its own outcome when it ends, as on Redis (docs/spec.md §3.8), not a stale end.
   */
  private removeEnded(entry: Entry): void {
    if (!entry.removeOnComplete || entry.runs.size > 0) return;
    this.deps.store.remove(entry);
    this.deps.ledger.drop(entry.key);
  }
}
