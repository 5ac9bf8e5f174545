import type { SundialLogger } from '@sundial/core';
import type { ClusterClock } from '../infra/cluster-clock';
import type { StaleReason } from '../store/replies';
import type { RowFields } from '../store/row';
import { claimCopy, cronFollowUp, lostCompletion } from './completion';
import { type CompletionBatcher, UnansweredCompletion } from './completion-batcher';
import { lostLine } from './hand-back-line';
import type { ActiveRun, LeaseKeeper } from './lease-keeper';
import type { RunFields, RunOutcome, RunReports } from './run-reports';
import type { Claimed } from './run-start';

// Why a file of its own: the runner (timer-runner.ts) claims timers, leases their runs and starts their
// handlers; recording what a run came to (its completion sent in a batch, complete.lua's answer reported,
// docs/spec.md §3.2 step 4) needs only the batcher, the reports and the clock, as does settling a lost
// at-most-once run found at claim.

export interface RunCompletionsOptions {
  batcher: CompletionBatcher;
  reports: RunReports;
  leases: LeaseKeeper;
  clock: ClusterClock;
  logger: SundialLogger;
  leaseMs: number;
  workerId: string;
}

/** The completions of a TimerRunner's runs. */
export class RunCompletions {
  constructor(private readonly options: RunCompletionsOptions) {}

  /**
   * Reports a run whose handler ended with `outcome` and sends its completion; the run stays leased until
   * that is answered (retried through an outage), then leaves the keeper. Resolves why the outcome was
   * not recorded (the timer changed while it ran: cancelled, replaced, its lease lost), else undefined.
   */
  async complete(
    partition: number,
    run: ActiveRun,
    claimed: Claimed,
    outcome: RunOutcome,
    fields: RunFields,
    latenessMs: number,
    startedAt: number,
  ): Promise<StaleReason | undefined> {
    const { batcher, reports, leases, clock, leaseMs, workerId } = this.options;
    // Still active while its completion is sent (retried through an outage): its lease is renewed.
    run.completing = true;
    const endedAt = clock.now();
    const durationMs = endedAt - startedAt;
    const follow = cronFollowUp(claimed.fields, claimed.due, endedAt);
    // handed back at shutdown before its handler ended (late-ends.ts): its end is stale, never the outcome
    const late = run.released;
    try {
      // one literal of a fixed shape, not spreads (each copied its source's properties one by one)
      const completed = await batcher.complete(partition, {
        id: run.id,
        key: run.key,
        version: run.version,
        runCount: run.runCount,
        mode: run.mode,
        outcome: outcome.outcome,
        error: outcome.error,
        cronNext: follow.cronNext,
        missed: follow.missed,
        overlap: follow.overlap,
        buffered: follow.buffered,
        ended: follow.ended,
        once: claimed.fields.k === 'once',
        workerId,
        late,
        claim:
          outcome.outcome === 'ok' && run.mode === 'held' && !late
            ? claimCopy(claimed, leaseMs, workerId)
            : undefined,
      });
      // complete.lua published the matching 'skipped' or 'stale' event.
      // Its line waits for that answer: a run whose timer changed while it ran did not fail what it records.
      if (completed.kind === 'stale') {
        reports.ended('stale', fields, latenessMs, durationMs);
        reports.staleAtCompletion(completed.reason, fields, outcome, latenessMs, durationMs);
        return completed.reason;
      }
      reports.ended(outcome, fields, latenessMs, durationMs);
      reports.finished(outcome, fields, latenessMs, durationMs);
      reports.skips(completed, fields);
      return undefined;
    } catch (error) {
      // Written to a Redis that did not answer (frozen, not gone): it runs the call once it reads it, so the
      // run counts what its handler did, as that records (docs/spec.md §4.7, §6.1). Never written (or
      // refused): nothing recorded; the lease expires and the reconciler settles the run, counting that —
      // counted here too, an ok run the ledger records lost (or put back) would be counted ok. Timed either way.
      if (error instanceof UnansweredCompletion && error.written)
        reports.ended(outcome, fields, latenessMs, durationMs);
      else reports.unanswered(fields, latenessMs, durationMs);
      reports.finished(outcome, fields, latenessMs, durationMs);
      this.options.logger.error(`Sundial could not complete a run: ${(error as Error).message}`, fields);
      return undefined;
    } finally {
      leases.delete(run);
    }
  }

  /** An at-most-once run whose worker was lost, found at claim: settled here as the reconciler would. */
  async settleLost(partition: number, row: RowFields): Promise<void> {
    const { batcher, reports, clock } = this.options;
    const completed = await batcher.complete(partition, lostCompletion(row, clock.now()));
    const fields = { key: row.key, id: row.id, version: Number(row.v), partition, handler: row.h };
    if (completed.kind !== 'done') return; // settled by another claim or a reconciler, which counted it
    reports.workerLost('lost');
    reports.skips(completed, fields);
    this.options.logger.warn(lostLine([row.key]), fields);
  }
}
