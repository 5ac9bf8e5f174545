import type { Clock } from '../clock';
import { liveCronSlot } from '../cron';
import { describeFailure } from '../failure';
import { refusals } from '../refusals';
import { afterCronRun, gridSkips, nextGridSlot, type Skips } from '../schedule';
import { dueOfSlot, hasSlotPolicy, lateSlot, slotAfter, slotAfterRun, type SlotStep } from '../slot-policy';
import type { TimerContext, TimerEvent, TimerHandler, TimerKind } from '../types';
import { toTimer, type Entry, type Run } from './entry';
import type { EntryStore } from './entry-store';
import type { EventHub } from './events';
import type { Outbox } from './outbox';

export type CancelReason = 'cancelled' | 'replaced' | 'reset' | 'disposed';
/** Why a run ended the timer unasked: no slot comes after it (§3.3), or its next is after endAt (§3.3a). */
type CronEnd = 'no-next-slot' | 'ended';

type RunError = NonNullable<TimerEvent['error']>;

export interface FirePathDeps {
  clock: Clock;
  store: EntryStore;
  events: EventHub;
  /** listener calls and aborts wait here until the engine operation that set them off is done */
  outbox: Outbox;
  /** looked up at each run, so a handler added to the object later is found */
  handlers: Readonly<Record<string, TimerHandler>>;
}

/**
 * Arms, fires, runs and settles timers. Every wake carries the `(id, key, version)` it was armed for
 * and every run its own identity: a wake or a completion that no longer matches the live entry is
 * stale and changes nothing (docs/spec.md §3.2, §3.5).
 */
export class FirePath {
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

  /** Arms a periodic timer's slot at its jittered due (docs/spec.md §3.3a). */
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
   * Claims the entry and runs its handler. A free run (an `awaitTask: false` tick, unless it is the
   * last one `maxRuns` allows) arms the next tick now; every other run holds the timer until it settles.
   */
  start(entry: Entry, due: number, triggered: boolean): void {
    const now = this.deps.clock.now();
    entry.runCount += 1;
    // A policy timer's free tick steps by the slot rule; one whose next slot is past endAt is its last, held.
    const step = hasSlotPolicy(entry) ? slotAfterRun(entry, entry.slot, now, now) : undefined;
    const free =
      !triggered &&
      entry.kind === 'interval' &&
      !entry.awaitTask &&
      !exhausted(entry) &&
      entry.backfill === null &&
      step?.next !== null;
    const run: Run = {
      id: entry.id,
      key: entry.key,
      kind: entry.kind,
      version: entry.version,
      due,
      slot: triggered ? due : entry.slot,
      started: now,
      triggered,
      free,
      controller: new AbortController(),
    };
    entry.runs.add(run);
    entry.latestRun = run;
    entry.lastFiredAt = now;
    entry.last = { started: now, status: 'running' };
    // A free tick arms the next one now: grid slots that passed since `due` are missed, not made up.
    const next = free && !step ? this.nextDue(entry, now) : undefined;
    if (next !== undefined) this.arm(entry, next);
    if (free && step) this.armSlot(entry, step.next!);
    this.emit('running', run, { due });
    if (next !== undefined) this.emitSkips(run, gridSkips(entry.scheduledAt, entry.everyMs!, due, now, next));
    if (free && step) this.emitSkips(run, step);
    void this.execute(entry, run);
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
  }

  emit(
    type: TimerEvent['type'],
    subject: Pick<TimerEvent, 'id' | 'key' | 'version' | 'kind'>,
    extra: Partial<TimerEvent> = {},
  ): void {
    const { id, key, version, kind } = subject;
    const event = { type, id, key, version, kind, at: this.deps.clock.now(), ...extra };
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
    const entry = this.deps.store.get(key);
    const stale = (reason: string, kind: TimerKind | null) =>
      this.emit('stale', { id, key, version, kind }, { reason });
    if (!entry || entry.id !== id) return stale('gone', null);
    if (entry.version !== version) return stale('version', entry.kind);
    if (!entry.wake) return stale('status', entry.kind);
    // A source may wake early (Node's timers can, by a millisecond): never run early, wait again.
    if (this.deps.clock.now() < entry.dueAt) return this.setWake(entry, version);
    entry.wake = null;
    if (entry.backfill === null && hasSlotPolicy(entry) && entry.kind !== 'once') {
      const late = lateSlot(entry, entry.slot, this.deps.clock.now());
      if (late) return this.passLate(entry, late);
    }
    this.start(entry, entry.dueAt, false);
  }

  /** A slot found late runs not (docs/spec.md §3.3a): counted as missed, and the slot the policy picks armed. */
  private passLate(entry: Entry, late: SlotStep): void {
    this.emitSkips(entry, late);
    if (late.next !== null) return this.armSlot(entry, late.next);
    this.finish(entry, entry.last?.status === 'failed' ? 'failed' : 'completed');
    this.emit(entry.outcome!, entry, { reason: late.ended });
  }

  /** Runs the handler; never rejects, whatever the handler does. */
  private async execute(entry: Entry, run: Run): Promise<void> {
    const { handlers } = this.deps;
    const handler = Object.hasOwn(handlers, entry.handler) ? handlers[entry.handler] : undefined;
    const payload = structuredClone(entry.payload);
    const ctx: TimerContext = {
      id: run.id,
      key: run.key,
      version: run.version,
      due: run.due,
      runCount: entry.runCount,
      payload,
      signal: run.controller.signal,
      timer: toTimer(entry),
    };
    // A `running` listener may already have cancelled it: then the run is stale before it starts.
    if (!entry.runs.has(run)) return this.settle(run, undefined);
    let error: RunError | undefined;
    try {
      if (!handler) throw refusals.unknownHandler(entry.handler, 'engine');
      await handler(payload, ctx);
    } catch (thrown) {
      error = describeFailure(thrown);
    }
    this.settle(run, error);
  }

  private settle(run: Run, error: RunError | undefined): void {
    const entry = this.deps.store.get(run.key);
    if (!entry || entry.id !== run.id || !entry.runs.delete(run)) {
      this.emit('stale', run, { reason: 'gone', due: run.due });
      return;
    }
    const now = this.deps.clock.now();
    if (entry.latestRun === run) {
      entry.last = { started: run.started, ended: now, status: error ? 'failed' : 'ok' };
      if (error) entry.last.error = error;
    }
    if (error) entry.lastErrorAt = now;
    else entry.lastCompletedAt = now;
    const ended = run.free ? undefined : this.release(entry, run, error !== undefined, now);
    const extra: Partial<TimerEvent> = error ? { due: run.due, error } : { due: run.due };
    this.emit(error ? 'failed' : 'completed', run, ended ? { ...extra, reason: ended } : extra);
  }

  /** A held run ended: the timer finishes, or arms what comes next. Returns why it ended, if it did so unasked. */
  private release(entry: Entry, run: Run, failed: boolean, now: number): CronEnd | undefined {
    const endsHere = entry.kind === 'once' || (failed && entry.kind === 'interval' && entry.awaitTask);
    if (exhausted(entry) || (!run.triggered && endsHere)) {
      this.finish(entry, entry.last?.status === 'ok' ? 'completed' : 'failed');
    } else if (run.triggered) {
      // The schedule did not move: a due time that passed meanwhile runs at once, late.
      this.arm(entry, entry.dueAt, entry.slot);
    } else if (entry.backfill) {
      this.nextBackfill(entry, entry.backfill);
    } else if (hasSlotPolicy(entry)) {
      return this.armAfterSlot(entry, run, now);
    } else if (entry.kind === 'cron') {
      return this.armAfterCronRun(entry, run, now);
    } else {
      const next = this.nextDue(entry, now);
      this.emitSkips(run, gridSkips(entry.scheduledAt, entry.everyMs!, run.due, run.started, next));
      this.arm(entry, next);
    }
    return undefined;
  }

  /** A backfill runs its slots one after another, each due at its slot; then the schedule goes on. */
  private nextBackfill(entry: Entry, backfill: NonNullable<Entry['backfill']>): void {
    const next = backfill.rest.shift();
    if (next !== undefined) return this.arm(entry, next);
    entry.backfill = null;
    this.armSlot(entry, backfill.resume);
  }

  /** A policy timer's run ended: the slot rule picks what comes next, or ends the timer (docs/spec.md §3.3a). */
  private armAfterSlot(entry: Entry, run: Run, now: number): CronEnd | undefined {
    const step = slotAfterRun(entry, run.slot, run.started, now);
    this.emitSkips(run, step);
    if (step.next !== null) {
      this.armSlot(entry, step.next);
      return undefined;
    }
    this.finish(entry, entry.last?.status === 'ok' ? 'completed' : 'failed');
    return step.ended;
  }

  /** The slots after the run's due up to now are skipped (counted, by reason); none left ends the timer. */
  private armAfterCronRun(entry: Entry, run: Run, now: number): CronEnd | undefined {
    const { next, ...skips } = afterCronRun(entry.cron!, entry.tz!, run.due, run.started, now);
    this.emitSkips(run, skips);
    if (next !== null) {
      this.arm(entry, next);
      return undefined;
    }
    this.finish(entry, entry.last?.status === 'ok' ? 'completed' : 'failed');
    return 'no-next-slot';
  }

  /** One `skipped` event per reason that has slots; `due` is the first of them (docs/spec.md §3.6). */
  private emitSkips(run: Pick<Run, 'id' | 'key' | 'version' | 'kind'>, skips: Skips): void {
    const { missed, overlap, firstMissed, firstOverlap } = skips;
    if (missed > 0) this.emit('skipped', run, { reason: 'missed', due: firstMissed, count: missed });
    if (overlap > 0) this.emit('skipped', run, { reason: 'overlap', due: firstOverlap, count: overlap });
  }

  private finish(entry: Entry, outcome: 'completed' | 'failed'): void {
    this.withdraw(entry);
    entry.outcome = outcome;
    this.deps.store.retire(entry);
    if (entry.removeOnComplete) this.deps.store.remove(entry);
  }
}

function exhausted(entry: Entry): boolean {
  return entry.maxRuns !== undefined && entry.runCount >= entry.maxRuns;
}
