import { type LogFields, logsDebug, type Skips, type SundialLogger, type TimerHandler } from '@sundial/core';
import type { RunStatus, SundialObserver } from '../metrics/observer';
import type { Completion, TimerRef } from '../store/fire-commands';
import type { StaleReason } from '../store/replies';

/** What every log line about a run carries (docs/spec.md §6.3). */
export interface RunFields extends LogFields {
  key: string;
  id: string;
  version: number;
  partition: number;
  handler: string;
}

/** How a handler ended; `stack`, of what it threw, only for the log line (the completion carries the rest). */
export type RunOutcome = Pick<Completion, 'outcome' | 'error'> & { stack?: string };

/** What changed under a run whose completion was stale, by complete.lua's reason. */
const STALE_CAUSES: Record<StaleReason, string> = {
  gone: 'its timer was cancelled',
  version: 'its timer was replaced',
  status: 'its lease was lost',
  overlap: 'a newer run took its place',
};

/**
 * The `handler` label of a run whose handler this worker does not have (failed `unknown-handler`). A
 * timer's handler is whatever its caller wrote: labelling by it would let timers add series to
 * `sundial_runs_total` and `sundial_run_duration_seconds` without bound. Never a handler name (names have
 * no parentheses, docs/spec.md §2).
 */
export const UNKNOWN_HANDLER_LABEL = '(unknown)';

/** What TimerRunner tells its observer and logger about runs, stale claims and completions, and skips. */
export class RunReports {
  /** false with a logger whose debug writes nothing: the per-run debug lines' fields are not built */
  private readonly debug: boolean;

  constructor(
    private readonly logger: SundialLogger,
    private readonly observer: SundialObserver,
    /** the worker's handlers: the only names its run metrics label */
    private readonly handlers: Record<string, TimerHandler>,
  ) {
    this.debug = logsDebug(logger);
  }

  /**
   * Counts a run once its completion is answered, by what that recorded (docs/spec.md §6.1): `stale` for
   * one whose timer was cancelled, replaced or its lease lost while it ran — a handler aborted by a bulk
   * cancel threw, but failed nothing, and must not raise SundialRunFailureRatioHigh.
   */
  ended(outcome: RunOutcome | 'stale', fields: RunFields, latenessMs: number, durationMs: number): void {
    const status: RunStatus = outcome === 'stale' ? 'stale' : outcome.outcome === 'ok' ? 'ok' : 'failed';
    this.observer.runFinished?.({ handler: this.label(fields), status, latenessMs, durationMs });
  }

  /**
   * A run whose completion never reached Redis (or was refused): it recorded nothing — its lease expires,
   * and whoever settles it counts that, requeued or lost —, so it is timed but not counted as ended with
   * its handler's outcome, which would count, say, an ok run the ledger records lost.
   */
  unanswered(fields: RunFields, latenessMs: number, durationMs: number): void {
    this.observer.runUnanswered?.({ handler: this.label(fields), latenessMs, durationMs });
  }

  /** The run metrics' `handler` label: own properties only, as invokeHandler looks a handler up (run-start.ts). */
  private label(fields: RunFields): string {
    return Object.hasOwn(this.handlers, fields.handler) ? fields.handler : UNKNOWN_HANDLER_LABEL;
  }

  /** Logs a run whose outcome was recorded (or whose completion failed: the reconciler settles it). */
  finished(outcome: RunOutcome, fields: RunFields, latenessMs: number, durationMs: number): void {
    if (outcome.outcome !== 'ok')
      this.logger.warn('run failed', {
        ...fields,
        latenessMs,
        durationMs,
        error: outcome.error,
        ...(outcome.stack === undefined ? {} : { stack: outcome.stack }),
      });
    else if (this.debug) this.logger.debug('run ok', { ...fields, latenessMs, durationMs });
  }

  staleAtClaim(partition: number, ref: TimerRef, reason: StaleReason): void {
    this.observer.stale?.({ reason, phase: 'claim' });
    if (this.debug) this.logger.debug('fire job stale at claim: not run', { ...ref, partition, reason });
  }

  /**
   * The run happened, but the timer changed under it: its outcome was dropped (docs/spec.md §3.2 step 4).
   * One info line, not `run failed`: a handler aborted by a cancel or replace failed nothing the timer records.
   */
  staleAtCompletion(
    reason: StaleReason,
    fields: RunFields,
    outcome: RunOutcome,
    latenessMs: number,
    durationMs: number,
  ): void {
    this.observer.stale?.({ reason, phase: 'complete' });
    this.logger.info(
      `run ended after ${STALE_CAUSES[reason]} (stale: ${reason}): its outcome was not recorded`,
      {
        ...fields,
        reason,
        outcome: outcome.outcome,
        ...(outcome.error === undefined ? {} : { error: outcome.error }),
        latenessMs,
        durationMs,
      },
    );
  }

  /** A run whose worker was lost, settled at claim: taken over to run again, or recorded lost (docs/spec.md §3.8). */
  workerLost(outcome: 'requeued' | 'lost'): void {
    this.observer.workerLost?.({ outcome });
  }

  skips(skips: Skips, fields: RunFields): void {
    for (const reason of ['missed', 'overlap'] as const) {
      if (skips[reason] === 0) continue;
      this.observer.skipped?.({ reason, count: skips[reason] });
      this.logger.debug(`periodic slots skipped (${reason})`, { ...fields, reason, count: skips[reason] });
    }
  }
}
