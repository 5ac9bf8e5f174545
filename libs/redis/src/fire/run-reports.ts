import { type LogFields, logsDebug, type Skips, type SundialLogger } from '@sundial/core';
import type { SundialObserver } from '../metrics/observer';
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

/** What TimerRunner tells its observer and logger about runs, stale claims and completions, and skips. */
export class RunReports {
  /** false with a logger whose debug writes nothing: the per-run debug lines' fields are not built */
  private readonly debug: boolean;

  constructor(
    private readonly logger: SundialLogger,
    private readonly observer: SundialObserver,
  ) {
    this.debug = logsDebug(logger);
  }

  finished(outcome: RunOutcome, fields: RunFields, latenessMs: number, durationMs: number): void {
    const status = outcome.outcome === 'ok' ? 'ok' : 'failed';
    this.observer.runFinished?.({ handler: fields.handler, status, latenessMs, durationMs });
    if (status !== 'ok')
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

  /** The run happened, but the timer changed under it: its outcome was dropped (docs/spec.md §3.2 step 4). */
  staleAtCompletion(reason: StaleReason, fields: RunFields): void {
    this.observer.stale?.({ reason, phase: 'complete' });
    this.logger.info('run outcome not recorded: the timer changed while it ran', { ...fields, reason });
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
