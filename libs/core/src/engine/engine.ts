import { realClock, type Clock } from '../clock';
import { OptionReader } from '../option-reader';
import { refusals } from '../refusals';
import { showValue } from '../show-value';
import { backfillSlots, fromStart } from '../slot-policy';
import type {
  BackfillRange,
  BackfillResult,
  CancelOutcome,
  ListOptions,
  ListResult,
  RescheduleWhen,
  Timer,
  TimerEventName,
  TimerHandler,
  TimerListener,
  TimerSpec,
  WriteOptions,
} from '../types';
import { validateIdArgument, validateKey, validateScope } from '../names';
import { normalizeBackfillRange, normalizeWhen, type ValidationLimits } from '../validation';
import { heldRun, startBackfill, toTimer } from './entry';
import { EntryStore } from './entry-store';
import { EventHub } from './events';
import { ExplainReads } from './explain-reads';
import { FirePath } from './fire-path';
import { toListQuery } from '../list-query';
import { consoleLogger, type SundialLogger } from '../logger';
import { Outbox } from './outbox';
import { Placement } from './placement';
import { type Engine, type EngineOperations, rememberRequests } from './request-memory';
import { checkMs } from './refusals';
import {
  DEFAULT_LEDGER_SIZE,
  validateLedgerSize,
  type LedgerEntry,
  type NextTime,
  type Preview,
  type TimerDescription,
} from '../ledger';
import { Ledger } from './ledger';

/** How long a cancelled key stays cancelled for `ifExists: 'keep'` (docs/spec.md §3.1), here and in Redis. */
export const DEFAULT_TOMBSTONE_MS = 7 * 86_400_000;

export interface EngineOptions {
  /** where time comes from; `realClock` by default, a `VirtualClock` in tests */
  clock?: Clock;
  /** the handlers timers may name; read at each run, so one added to the object later is found */
  handlers: Readonly<Record<string, TimerHandler>>;
  limits?: Partial<ValidationLimits>;
  /** how long a cancelled key is remembered for `ifExists: 'keep'` (default 7 days) */
  tombstoneMs?: number;
  logger?: SundialLogger;
  /** how long a call's `requestId` is remembered (default 24 h) */
  requestWindowMs?: number;
  /** entries each timer's ledger keeps (default 50; 0: none), docs/spec.md §3.9 */
  ledger?: number;
  /** how long dispose() lets running handlers end, on `clock`, before it aborts them (default 0), §5.1a */
  shutdownGraceMs?: number;
}

export function createEngine(options: EngineOptions): Engine {
  return rememberRequests(new MemoryEngine(options), options);
}

class MemoryEngine implements EngineOperations {
  private readonly clock: Clock;
  private readonly store: EntryStore;
  private readonly events: EventHub;
  private readonly firePath: FirePath;
  private readonly placement: Placement;
  private readonly outbox = new Outbox();
  private readonly ledger: Ledger;
  private readonly explain: ExplainReads;
  private disposed = false;
  private closing: Promise<void> | undefined;
  private readonly shutdownGraceMs: number;

  constructor(options: EngineOptions) {
    const { clock = realClock, handlers, limits = {}, tombstoneMs = DEFAULT_TOMBSTONE_MS } = options;
    const logger = options.logger ?? consoleLogger;
    if (typeof handlers !== 'object' || handlers === null) {
      throw refusals.invalid(
        'handlers',
        `handlers must be an object of functions, got ${showValue(handlers)}`,
        "Pass createEngine({ handlers: { 'invoice.remind': async (payload, ctx) => {} } }).",
      );
    }
    checkMs('tombstoneMs', tombstoneMs, '604800000 (7 days)');
    // As RedisTimers checks them (Redis keeps a request for a whole number of ms, at least 1): both
    // backends take the same windows and limits, and a wrong one is refused here, not met at each call.
    const read = OptionReader.of('createEngine', options, '{ handlers }');
    read.integer('requestWindowMs', 1, '86400000 (24 h)');
    read.limits();
    this.shutdownGraceMs = checkMs('shutdownGraceMs', options.shutdownGraceMs ?? 0, '25000');
    this.clock = clock;
    this.store = new EntryStore(tombstoneMs);
    this.ledger = new Ledger(validateLedgerSize(options.ledger ?? DEFAULT_LEDGER_SIZE), tombstoneMs, () =>
      clock.now(),
    );
    this.explain = new ExplainReads({
      clock,
      store: this.store,
      ledger: this.ledger,
      limits,
      handlers,
      assertOpen: () => this.assertOpen(),
    });
    this.events = new EventHub(logger);
    this.firePath = new FirePath({
      clock,
      store: this.store,
      events: this.events,
      outbox: this.outbox,
      handlers,
      ledger: this.ledger,
    });
    this.placement = new Placement({
      clock,
      store: this.store,
      firePath: this.firePath,
      logger,
      handlers,
      limits,
    });
  }

  async schedule(spec: TimerSpec<unknown>, options?: WriteOptions, taken = false): Promise<Timer> {
    return this.operation(() => this.placement.schedule(spec, options?.ownedRow === true, taken));
  }

  async scheduleMany(specs: TimerSpec<unknown>[], options?: WriteOptions): Promise<Timer[]> {
    return this.operation(() => this.placement.scheduleMany(specs, options?.ownedRow === true));
  }

  /** A finished row kept by `removeOnComplete: false` is removed: its outcome is its final status. */
  async cancelOutcome(key: string): Promise<CancelOutcome> {
    return this.operation(() => {
      const entry = this.store.get(validateKey(key));
      if (!entry) return null;
      if (entry.outcome) {
        this.store.remove(entry);
        this.ledger.drop(entry.key);
        return entry.outcome;
      }
      this.firePath.cancel(entry, 'cancelled');
      return 'cancelled';
    });
  }

  async cancelAll(scope?: string): Promise<number> {
    return this.operation(() => {
      const prefix = validateScope(scope);
      const global = prefix === '';
      let count = 0;
      for (const entry of this.store.entries()) {
        if (!entry.key.startsWith(prefix)) continue;
        if (entry.outcome) {
          this.store.remove(entry);
          this.ledger.drop(entry.key);
        } else {
          this.firePath.cancel(entry, global ? 'reset' : 'cancelled');
          count += 1;
        }
      }
      if (global) this.firePath.emit('reset', anonymous, { count });
      return count;
    });
  }

  async reschedule(key: string, when: RescheduleWhen): Promise<Timer> {
    return this.operation(() => {
      // the arguments before the row, as on Redis (docs/spec.md §2 "Refusal order")
      validateKey(key);
      const target = normalizeWhen(when);
      const entry = this.store.live(key, 'reschedule');
      if (heldRun(entry)) throw refusals.inactive(key, 'running', 'reschedule');
      const now = this.clock.now();
      const dueAt = 'delayMs' in target ? now + target.delayMs : target.atMs;
      this.firePath.abortFreeRuns(entry);
      // An interval's grid is anchored at scheduledAt: from now on, `now + k·every` after the new due.
      entry.scheduledAt = now;
      if (entry.kind === 'once') entry.delayMs = 'delayMs' in target ? target.delayMs : undefined;
      [entry.paused, entry.backfill] = [false, null];
      // The moved run is no slot (§3.4): run where asked; what came before now is no skip of it.
      [entry.attempt, entry.countFrom] = [1, dueAt < now ? now : null];
      this.firePath.arm(entry, dueAt);
      entry.moved = true;
      this.firePath.emit('scheduled', entry, { due: dueAt, reason: 'reschedule' });
      return toTimer(entry);
    });
  }

  async pause(key: string): Promise<Timer> {
    return this.operation(() => {
      const entry = this.store.live(key, 'pause');
      if (heldRun(entry)) throw refusals.inactive(key, 'running', 'pause');
      if (!entry.paused) {
        this.firePath.abortFreeRuns(entry);
        this.firePath.withdraw(entry);
        entry.version += 1;
        this.ledger.append(entry.key, { at: isoNow(this.clock), event: 'paused', version: entry.version });
        entry.paused = true;
        // A backfill in progress ends here: resume goes on with the schedule.
        entry.backfill = null;
      }
      return toTimer(entry);
    });
  }

  async resume(key: string): Promise<Timer> {
    return this.operation(() => {
      const entry = this.store.live(key, 'resume');
      if (entry.paused) {
        // Found first: a cron with no slot left refuses to resume and stays paused.
        const now = this.clock.now();
        const slot = entry.kind === 'once' ? undefined : this.firePath.nextSlot(entry, fromStart(entry, now));
        entry.paused = false;
        // A fresh start: the failure streak (pauseAfterFailures) and any retry left pending are over.
        [entry.attempt, entry.countFrom, entry.failures, entry.moved] = [1, null, 0, false];
        // Its endAt passed while it was paused: no slot is left, so it ends as a late slot past endAt does.
        if (slot !== undefined && slot > (entry.endAt ?? Infinity)) {
          this.firePath.passLate(entry, { next: null, ended: 'ended', missed: 0, overlap: 0 });
        } else if (slot === undefined) this.firePath.arm(entry, this.firePath.nextDue(entry, now));
        else this.firePath.armSlot(entry, slot);
        if (!entry.outcome) this.firePath.emit('scheduled', entry, { due: entry.dueAt, reason: 'resume' });
      }
      return toTimer(entry);
    });
  }

  /**
   * Runs it now, out of band; the scheduled due is armed again when that run ends. Answers the row as the
   * trigger left it, before its run starts (pending, as Redis answers: there the run starts elsewhere).
   */
  async trigger(key: string): Promise<Timer> {
    const now = this.clock.now();
    const [entry, triggered] = this.operation(() => {
      const entry = this.store.live(key, 'trigger');
      if (heldRun(entry)) throw refusals.inactive(key, 'running', 'trigger');
      if (entry.paused) throw refusals.inactive(key, 'paused', 'trigger');
      this.firePath.withdraw(entry);
      entry.version += 1;
      this.firePath.emit('scheduled', entry, { due: now, reason: 'trigger' });
      return [entry, toTimer(entry)] as const;
    });
    // A scheduled listener may have cancelled, paused or moved it: then that version is not to run.
    if (this.store.get(key) === entry && entry.version === triggered.version) {
      this.firePath.start(entry, now, true);
    }
    return triggered;
  }

  /** Runs the slots of [from, to] now, one after another, each due at its slot; then the schedule goes on. */
  async backfill(key: string, range: BackfillRange): Promise<BackfillResult> {
    return this.operation(() => {
      // Refusal order (docs/spec.md §2): the arguments, the row, what the timer is — a one-shot, a range
      // its schedule refuses or holds no slot of — and only then what it is doing, as on Redis, where the
      // client finds the slots and backfill.lua then meets the state.
      validateKey(key);
      const { from, to } = normalizeBackfillRange(range);
      const entry = this.store.live(key, 'backfill');
      if (entry.kind === 'once') throw refusals.backfillNotPeriodic(key);
      const [first, ...rest] = backfillSlots(entry, from, to, this.clock.now());
      if (first === undefined) return { slots: 0 };
      if (heldRun(entry) || entry.backfill) throw refusals.inactive(key, 'running', 'backfill');
      if (entry.paused) throw refusals.inactive(key, 'paused', 'backfill');
      startBackfill(entry, rest);
      this.firePath.arm(entry, first);
      this.firePath.emit('scheduled', entry, { due: first, reason: 'backfill', count: rest.length + 1 });
      return { slots: rest.length + 1 };
    });
  }

  async get(key: string): Promise<Timer | null> {
    this.assertOpen();
    const entry = this.store.get(validateKey(key));
    return entry ? toTimer(entry) : null;
  }

  async list(options?: ListOptions): Promise<ListResult> {
    this.assertOpen();
    return this.store.list(toListQuery(options));
  }

  async check(id: string): Promise<boolean> {
    this.assertOpen();
    return this.store.hasId(validateIdArgument(id));
  }

  async snapshot(): Promise<string[]> {
    this.assertOpen();
    return this.store.ids();
  }

  // The explain reads keep TimersApi's signatures; ExplainReads does the work.
  async history(...args: Parameters<Engine['history']>): Promise<LedgerEntry[]> {
    return this.explain.history(...args);
  }

  async next(...args: Parameters<Engine['next']>): Promise<NextTime[]> {
    return this.explain.next(...args);
  }

  async preview(...args: Parameters<Engine['preview']>): Promise<Preview> {
    return this.explain.preview(...args);
  }

  async describe(...args: Parameters<Engine['describe']>): Promise<TimerDescription> {
    return this.explain.describe(...args);
  }

  on(event: TimerEventName, listener: TimerListener): () => void {
    this.assertOpen();
    return this.events.on(event, listener);
  }

  /** Lets running handlers end within the grace (no run starts meanwhile), then cancels every live entry. */
  dispose(): Promise<void> {
    const drained = this.closing ? undefined : this.firePath.drain.drain(this.clock, this.shutdownGraceMs);
    this.closing ??= drained ? drained.then(() => this.shutDown()) : Promise.resolve(this.shutDown());
    return this.closing;
  }

  private shutDown(): void {
    this.disposed = true;
    this.outbox.hold(() => {
      const live = this.store.entries().filter((entry) => !entry.outcome);
      for (const entry of live) this.firePath.cancel(entry, 'disposed');
      this.firePath.emit('disposed', anonymous, { count: live.length });
    });
    this.events.clear();
  }

  /** A public call: refused once disposed; what it sets off in user code runs once it is done. */
  private operation<T>(body: () => T): T {
    this.assertOpen();
    return this.outbox.hold(body);
  }

  private assertOpen(): void {
    if (this.disposed) throw refusals.disposed('engine');
  }
}

const isoNow = (clock: Clock): string => new Date(clock.now()).toISOString();

/** The subject of an engine-wide event (reset, disposed): no single timer. */
const anonymous = { id: '', key: '', version: 0, kind: null };
