import type { Clock } from '../clock';
import {
  countersOf,
  historyLimit,
  nextCount,
  type DescribeOptions,
  type HistoryOptions,
  type LedgerEntry,
  type NextOptions,
  type NextTime,
  type Preview,
  type TimerDescription,
} from '../ledger';
import { type ArmedState, nextTimesOf, previewSpec } from '../next-times';
import { refusals } from '../refusals';
import type { TimerHandler, TimerSpec } from '../types';
import { validateKey } from '../names';
import type { ValidationLimits } from '../validation';
import { type Entry, toTimer } from './entry';
import type { EntryStore } from './entry-store';
import { assertKnownHandler } from './known-handler';
import type { Ledger } from './ledger';

export interface ExplainDeps {
  clock: Clock;
  store: EntryStore;
  ledger: Ledger;
  limits: Partial<ValidationLimits>;
  /** the engine's handlers: preview refuses an unknown one as schedule does */
  handlers: Readonly<Record<string, TimerHandler>>;
  /** the engine's disposed check, called where each read made it before */
  assertOpen: () => void;
}

/**
 * The engine's explain reads (docs/spec.md §3.9): history, next, preview, describe. Apart from the
 * engine because they only read rows and ledgers and never change a timer, so they need none of the
 * FirePath, placement or outbox machinery the operations do.
 */
export class ExplainReads {
  constructor(private readonly deps: ExplainDeps) {}

  history(key: string, options?: HistoryOptions): LedgerEntry[] {
    const { store, ledger, clock } = this.deps;
    this.deps.assertOpen();
    // the limit checked before the key, as on Redis (and as next and describe check theirs)
    const limit = historyLimit(options);
    validateKey(key);
    const entries = ledger.entries(key, limit);
    if (entries) return entries;
    if (store.get(key) || store.tombstone(key, clock.now())) return [];
    throw refusals.noHistory(key);
  }

  next(key: string, options?: NextOptions): NextTime[] {
    const count = nextCount(options);
    const entry = this.row(key);
    return nextTimesOf(toTimer(entry), count, armedOf(entry, this.deps.clock.now()));
  }

  preview(spec: TimerSpec<unknown>, options?: NextOptions): Preview {
    this.deps.assertOpen();
    const { limits, clock, handlers } = this.deps;
    return previewSpec(spec, limits, clock.now(), nextCount(options), ({ handler }) =>
      assertKnownHandler(handlers, handler),
    );
  }

  describe(key: string, options?: DescribeOptions): TimerDescription {
    // both bounds checked before the key, as on Redis
    const count = nextCount(options);
    const limit = historyLimit(options);
    const entry = this.row(key);
    const timer = toTimer(entry);
    const history = this.history(key, { limit });
    const next = nextTimesOf(timer, count, armedOf(entry, this.deps.clock.now()));
    return { timer, next, history, counters: countersOf(timer, history) };
  }

  /** The entry under `key` (live, or finished and kept), or `not-found`. */
  private row(key: string): Entry {
    this.deps.assertOpen();
    const entry = this.deps.store.get(validateKey(key));
    if (!entry) throw refusals.notFound(key);
    return entry;
  }
}

/**
 * What the entry's armed wake is beyond its Timer, at `now`: a retry (its try past the first), a due run
 * however late (a run moved by reschedule, a kept slot), or a backfill's next slots. No trigger: the engine starts a trigger's run at once, so none waits to be claimed.
 */
function armedOf(entry: Entry, now: number): ArmedState {
  return {
    now,
    retry: entry.attempt > 1,
    asked: entry.moved || entry.countFrom !== null,
    ...(entry.backfill && { backfill: { ...entry.backfill, rest: [...entry.backfill.rest] } }),
  };
}
