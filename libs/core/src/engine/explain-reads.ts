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
import { nextTimesOf, previewSpec } from '../next-times';
import { refusals } from '../refusals';
import type { Timer, TimerHandler, TimerSpec } from '../types';
import { validateKey } from '../names';
import type { ValidationLimits } from '../validation';
import { toTimer } from './entry';
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
    validateKey(key);
    const limit = historyLimit(options);
    const entries = ledger.entries(key, limit);
    if (entries) return entries;
    if (store.get(key) || store.tombstone(key, clock.now())) return [];
    throw refusals.noHistory(key);
  }

  next(key: string, options?: NextOptions): NextTime[] {
    const count = nextCount(options);
    return nextTimesOf(this.row(key), count);
  }

  preview(spec: TimerSpec, options?: NextOptions): Preview {
    this.deps.assertOpen();
    const { limits, clock, handlers } = this.deps;
    return previewSpec(spec, limits, clock.now(), nextCount(options), ({ handler }) =>
      assertKnownHandler(handlers, handler),
    );
  }

  describe(key: string, options?: DescribeOptions): TimerDescription {
    const count = nextCount(options);
    const timer = this.row(key);
    const history = this.history(key, options);
    return { timer, next: nextTimesOf(timer, count), history, counters: countersOf(timer, history) };
  }

  /** The row under `key` (live, or finished and kept), or `not-found`. */
  private row(key: string): Timer {
    this.deps.assertOpen();
    const entry = this.deps.store.get(validateKey(key));
    if (!entry) throw refusals.notFound(key);
    return toTimer(entry);
  }
}
