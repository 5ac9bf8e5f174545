/** Stable, machine-readable reasons a call is refused or a run fails (docs/spec.md §2, §5.3). */
export type SundialErrorReason =
  | 'invalid'
  | 'payload-too-large'
  | 'duplicate-key'
  | 'not-found'
  | 'inactive'
  | 'disposed'
  | 'unauthorized'
  | 'forbidden'
  | 'unavailable'
  | 'idempotency-conflict'
  | 'unknown-handler'
  | 'forbidden-target'
  | 'lost';

/**
 * What a refusal met, as data, for a caller that phrases its own fix (the CLI, the HTTP API) rather
 * than parse the message (docs/spec.md §2). Present only on the refusals that name one.
 */
export interface SundialErrorDetail {
  /**
   * `inactive`: the status of the timer that refused the call; `not-found` on `key` from a write (pause,
   * resume, trigger, reschedule, backfill) that met a kept timer that ended: the status it ended with
   */
  status?: 'running' | 'paused' | 'completed' | 'failed';
  /**
   * which refusal it is where `reason` and `field` leave it open: `outcome-unknown` (`unavailable`: a write
   * cut off in flight, which may have been applied), `one-shot` (`invalid` on `key`: a backfill of a timer
   * that runs once), `due-before-status` (`invalid` on `status`: a status other than pending with dueBefore),
   * `no-history` (`not-found` on `key`: a history read of a key with no timer and no ledger),
   * `repartition-cut` (`unavailable`: a repartition cut off after its first write, which resumes),
   * `cursor-other-list` (`invalid` on `cursor`: a list's cursor given with another prefix or filter),
   * `repeated-key` (`duplicate-key` on `specs[i].key`: a batch that names the key in an earlier spec too)
   */
  code?:
    | 'outcome-unknown'
    | 'one-shot'
    | 'due-before-status'
    | 'no-history'
    | 'repartition-cut'
    | 'cursor-other-list'
    | 'repeated-key';
}

export interface SundialErrorShape {
  reason: SundialErrorReason;
  field?: string;
  message: string;
  fix: string;
  detail?: SundialErrorDetail;
}

/** Every refusal: what went wrong (`reason`, `field`, `message`) and what to write instead (`fix`). */
export class SundialError extends Error implements SundialErrorShape {
  readonly reason: SundialErrorReason;
  readonly field?: string;
  readonly fix: string;
  readonly detail?: SundialErrorDetail;

  constructor(shape: SundialErrorShape) {
    super(shape.message);
    this.name = 'SundialError';
    this.reason = shape.reason;
    this.field = shape.field;
    this.fix = shape.fix;
    this.detail = shape.detail;
  }

  toJSON(): SundialErrorShape {
    const { reason, field, message, fix, detail } = this;
    return {
      reason,
      ...(field !== undefined && { field }),
      message,
      fix,
      ...(detail !== undefined && { detail }),
    };
  }
}

export function isSundialError(error: unknown): error is SundialError {
  return error instanceof SundialError;
}
