import { realClock, type Clock } from '../clock';
import type { SundialError } from '../errors';
import { closestName } from '../closest-name';
import { refusals } from '../refusals';
import { firstDue } from '../schedule';
import { showValue } from '../show-value';
import type {
  ListOptions,
  ListResult,
  NormalizedSpec,
  RescheduleWhen,
  Timer,
  TimerEventName,
  TimerHandler,
  TimerListener,
  TimerSpec,
  TimersApi,
} from '../types';
import {
  normalizeSpec,
  normalizeWhen,
  validateKey,
  validateScope,
  type ValidationLimits,
} from '../validation';
import { createEntry, heldRun, toTimer, type Entry } from './entry';
import { EntryStore } from './entry-store';
import { EventHub } from './events';
import { toListQuery } from './list-options';
import { jsonConsoleLogger, type EngineLogger } from './logger';
import { rememberRequests } from './request-memory';
import { Outbox } from './outbox';
import { FirePath } from './fire-path';
import { atIndex, inactive } from './refusals';
import { describeWhen, whenOfSpec, whenOfTimer } from './when';

/** How long a cancelled key stays cancelled for `ifExists: 'keep'` (SPEC §3.1), here and in Redis. */
export const DEFAULT_TOMBSTONE_MS = 7 * 86_400_000;

export interface EngineOptions {
  /** where time comes from; `realClock` by default, a `VirtualClock` in tests */
  clock?: Clock;
  /** the handlers timers may name; read at each run, so one added to the object later is found */
  handlers: Readonly<Record<string, TimerHandler>>;
  limits?: Partial<ValidationLimits>;
  /** how long a cancelled key is remembered for `ifExists: 'keep'` (default 7 days) */
  tombstoneMs?: number;
  logger?: EngineLogger;
  /** how long a call's `requestId` is remembered (default 24 h) */
  requestWindowMs?: number;
}

/** The in-memory engine: SPEC's `Timers` operations in one process, without Redis or Nest. */
export type Engine = TimersApi;

export function createEngine(options: EngineOptions): Engine {
  return rememberRequests(new MemoryEngine(options), options);
}

class MemoryEngine implements Engine {
  private readonly clock: Clock;
  private readonly handlers: Readonly<Record<string, TimerHandler>>;
  private readonly limits: Partial<ValidationLimits>;
  private readonly logger: EngineLogger;
  private readonly store: EntryStore;
  private readonly events: EventHub;
  private readonly firePath: FirePath;
  private readonly outbox = new Outbox();
  private lastId = 0;
  private disposed = false;

  constructor(options: EngineOptions) {
    const { clock = realClock, handlers, limits = {}, tombstoneMs = DEFAULT_TOMBSTONE_MS } = options;
    this.logger = options.logger ?? jsonConsoleLogger;
    if (typeof handlers !== 'object' || handlers === null) {
      throw refusals.invalid(
        'handlers',
        `handlers must be an object of functions, got ${showValue(handlers)}`,
        "Pass createEngine({ handlers: { 'invoice.remind': async (payload, ctx) => {} } }).",
      );
    }
    if (!Number.isFinite(tombstoneMs) || tombstoneMs < 0) {
      throw refusals.invalid(
        'tombstoneMs',
        `tombstoneMs ${showValue(tombstoneMs)} is not a duration`,
        'Write tombstoneMs as a number of milliseconds of 0 or more, e.g. 604800000 (7 days).',
      );
    }
    this.clock = clock;
    this.handlers = handlers;
    this.limits = limits;
    this.store = new EntryStore(tombstoneMs);
    this.events = new EventHub(this.logger);
    this.firePath = new FirePath({
      clock,
      store: this.store,
      events: this.events,
      outbox: this.outbox,
      handlers,
    });
  }

  async schedule(spec: TimerSpec): Promise<Timer> {
    return this.operation(() => this.place(this.normalize(spec)));
  }

  /** All or nothing: every spec is checked before the first one is placed. */
  async scheduleMany(specs: TimerSpec[]): Promise<Timer[]> {
    return this.operation(() => {
      if (!Array.isArray(specs)) {
        throw refusals.invalid(
          'specs',
          `specs must be an array of timer specs, got ${showValue(specs)}`,
          "Pass an array, e.g. [{ key: 'a', handler: 'h', delay: '1m' }].",
        );
      }
      const normalized = specs.map((spec, index) => {
        try {
          return this.normalize(spec);
        } catch (error) {
          throw atIndex(error, index);
        }
      });
      const placed = new Set<string>();
      normalized.forEach((spec, index) => {
        const live = this.store.get(spec.key)?.outcome === null;
        if (spec.ifExists === 'error' && (live || placed.has(spec.key))) {
          throw atIndex(refusals.duplicateKey(spec.key), index);
        }
        placed.add(spec.key);
      });
      return normalized.map((spec) => this.place(spec));
    });
  }

  /** A finished row kept by `removeOnComplete: false` is dropped silently: there was nothing to cancel. */
  async cancel(key: string): Promise<boolean> {
    return this.operation(() => {
      const entry = this.store.get(validateKey(key));
      if (!entry) return false;
      if (entry.outcome) {
        this.store.remove(entry);
        return false;
      }
      this.firePath.cancel(entry, 'cancelled');
      return true;
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
      const entry = this.findLive(key);
      const target = normalizeWhen(when);
      if (heldRun(entry)) throw inactive(entry, 'rescheduled while it is running', 'replace');
      const now = this.clock.now();
      const dueAt = 'delayMs' in target ? now + target.delayMs : target.atMs;
      this.firePath.abortFreeRuns(entry);
      // An interval's grid is anchored at scheduledAt: from now on, `now + k·every` after the new due.
      entry.scheduledAt = now;
      if (entry.kind === 'once') entry.delayMs = 'delayMs' in target ? target.delayMs : undefined;
      entry.paused = false;
      this.firePath.arm(entry, dueAt);
      this.firePath.emit('scheduled', entry, { due: dueAt, reason: 'reschedule' });
      return toTimer(entry);
    });
  }

  async pause(key: string): Promise<Timer> {
    return this.operation(() => {
      const entry = this.findLive(key);
      if (heldRun(entry)) throw inactive(entry, 'paused while it is running', 'wait');
      if (!entry.paused) {
        this.firePath.abortFreeRuns(entry);
        this.firePath.withdraw(entry);
        entry.version += 1;
        entry.paused = true;
      }
      return toTimer(entry);
    });
  }

  async resume(key: string): Promise<Timer> {
    return this.operation(() => {
      const entry = this.findLive(key);
      if (entry.paused) {
        // Found first: a cron with no slot left refuses to resume and stays paused.
        const due = this.firePath.nextDue(entry, this.clock.now());
        entry.paused = false;
        this.firePath.arm(entry, due);
        this.firePath.emit('scheduled', entry, { due: entry.dueAt, reason: 'resume' });
      }
      return toTimer(entry);
    });
  }

  /** Runs it now, out of band; the scheduled due is armed again when that run ends. */
  async trigger(key: string): Promise<Timer> {
    const now = this.clock.now();
    const [entry, triggered] = this.operation(() => {
      const entry = this.findLive(key);
      if (heldRun(entry)) throw inactive(entry, 'triggered while it is running', 'wait');
      if (entry.paused) throw inactive(entry, 'triggered while it is paused', 'resume');
      this.firePath.withdraw(entry);
      entry.version += 1;
      this.firePath.emit('scheduled', entry, { due: now, reason: 'trigger' });
      return [entry, toTimer(entry)] as const;
    });
    // A scheduled listener may have cancelled, paused or moved it: then that version is not to run.
    if (this.store.get(key) !== entry || entry.version !== triggered.version) return triggered;
    this.firePath.start(entry, now, true);
    return toTimer(entry);
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
    if (typeof id !== 'string') {
      throw refusals.invalid('id', `id ${showValue(id)} is not a timer id`, 'Pass a Timer\'s id, e.g. "42".');
    }
    return this.store.hasId(id);
  }

  async snapshot(): Promise<string[]> {
    this.assertOpen();
    return this.store.ids();
  }

  on(event: TimerEventName, listener: TimerListener): () => void {
    this.assertOpen();
    return this.events.on(event, listener);
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
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

  private normalize(spec: TimerSpec): NormalizedSpec {
    const normalized = normalizeSpec(spec, this.limits);
    if (!Object.hasOwn(this.handlers, normalized.handler)) throw this.unknownHandler(normalized.handler);
    return normalized;
  }

  /** SPEC §3.1 step 3 on: what a valid spec does to its key. */
  private place(spec: NormalizedSpec): Timer {
    const existing = this.store.get(spec.key);
    const live = existing && !existing.outcome ? existing : undefined;
    if (live && spec.ifExists === 'error') throw refusals.duplicateKey(spec.key);
    if (spec.ifExists === 'keep') {
      const recorded = live ? toTimer(live) : this.store.tombstone(spec.key, this.clock.now());
      if (recorded) return this.keep(recorded, spec);
    }
    // A finished row kept by removeOnComplete: false does not hold its key: the new timer takes it.
    if (live) this.firePath.cancel(live, 'replaced');
    else if (existing) this.store.remove(existing);
    const now = this.clock.now();
    const entry = createEntry(String(++this.lastId), spec, now);
    this.store.add(entry);
    this.firePath.arm(entry, firstDue(spec, now));
    this.firePath.emit('scheduled', entry, { due: entry.dueAt });
    return toTimer(entry);
  }

  /** The first call names the time: a later one gets the recorded timer, and a warning if it asked for another. */
  private keep(recorded: Timer, spec: NormalizedSpec): Timer {
    const requested = describeWhen(whenOfSpec(spec));
    const kept = describeWhen(whenOfTimer(recorded));
    if (requested !== kept) {
      this.logger.warn('ifExists keep: the key already exists, so the requested time is ignored', {
        key: recorded.key,
        id: recorded.id,
        version: recorded.version,
        status: recorded.status,
        recorded: kept,
        requested,
      });
    }
    return recorded;
  }

  /** The live (not finished) entry under `key`, or `not-found`. */
  private findLive(key: string): Entry {
    const entry = this.store.get(validateKey(key));
    if (!entry || entry.outcome) throw refusals.notFound(key);
    return entry;
  }

  private unknownHandler(name: string): SundialError {
    const known = Object.keys(this.handlers);
    const guess = closestName(name, known);
    return refusals.invalid(
      'handler',
      `no handler named "${name}" is registered with this engine`,
      guess
        ? `Did you mean "${guess}"? Use it, or register "${name}" in createEngine({ handlers }).`
        : `Register "${name}" in createEngine({ handlers })${known.length ? `, or use one of ${known.join(', ')}` : ''}.`,
    );
  }

  private assertOpen(): void {
    if (this.disposed) throw refusals.disposed('engine');
  }
}

/** The subject of an engine-wide event (reset, disposed): no single timer. */
const anonymous = { id: '', key: '', version: 0, kind: null };
