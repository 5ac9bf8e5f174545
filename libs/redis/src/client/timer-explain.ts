import {
  type ArmedState,
  countersOf,
  type DescribeOptions,
  historyLimit,
  isSundialError,
  type HistoryOptions,
  type LedgerEntry,
  nextCount,
  type NextOptions,
  type NextTime,
  nextTimesOf,
  type Preview,
  previewSpec,
  refusals,
  type Timer,
  type TimerDescription,
  type TimerSpec,
  type SpecLimits,
} from '@sundial/core';
import type { ClusterClock } from '../infra/cluster-clock';
import type { LayoutGuard } from './layout-guard';
import type { LedgerReads } from './ledger-reads';

/**
 * What the explain reads use of their RedisTimers: its `get` with the row's armed state (`next` lists a
 * pending trigger, retry or backfill as it will run), and its `call` (refused after dispose, connected first).
 */
export interface ExplainAccess {
  row(key: string): Promise<{ timer: Timer; armed: ArmedState } | null>;
  call<T>(read: () => Promise<T>): Promise<T>;
}

/**
 * The explain reads of RedisTimers (docs/spec.md): history, next, preview, describe. They only read
 * and compute, so they live apart from the writes; RedisTimers answers them through its `call`.
 */
export class TimerExplain {
  constructor(
    private readonly timers: ExplainAccess,
    private readonly ledger: LedgerReads,
    private readonly layout: LayoutGuard,
    private readonly clock: ClusterClock,
    private readonly limits: SpecLimits | undefined,
  ) {}

  history(key: string, options?: HistoryOptions): Promise<LedgerEntry[]> {
    return this.timers.call(async () => {
      try {
        return await this.ledger.history(key, historyLimit(options));
      } catch (error) {
        // not-found may be a client whose count a repartition replaced: that refusal, then
        if (isSundialError(error) && error.reason === 'not-found') await this.layout.check();
        throw error;
      }
    });
  }

  async next(key: string, options?: NextOptions): Promise<NextTime[]> {
    const count = nextCount(options);
    const { timer, armed } = await this.row(key);
    return nextTimesOf(timer, count, armed);
  }

  /** Validates like `schedule` and writes nothing; the first due is counted from Redis now (estimated). */
  preview(spec: TimerSpec<unknown>, options?: NextOptions): Promise<Preview> {
    return this.timers.call(async () => previewSpec(spec, this.limits, this.clock.now(), nextCount(options)));
  }

  async describe(key: string, options?: DescribeOptions): Promise<TimerDescription> {
    const count = nextCount(options);
    const limit = historyLimit(options);
    const { timer, armed } = await this.row(key);
    const history = await this.timers.call(() => this.ledger.history(key, limit));
    const next = nextTimesOf(timer, count, armed);
    return { timer, next, history, counters: countersOf(timer, history) };
  }

  /** The row under `key` (live, or finished and kept), or `not-found`. */
  private async row(key: string): Promise<{ timer: Timer; armed: ArmedState }> {
    const row = await this.timers.row(key);
    if (!row) throw refusals.notFound(key);
    // read after the row: a slot due by then that its wake will pass as late is not listed (§3.3c)
    return { timer: row.timer, armed: { ...row.armed, now: this.clock.now() } };
  }
}
