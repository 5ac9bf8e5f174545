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

export interface SundialErrorShape {
  reason: SundialErrorReason;
  field?: string;
  message: string;
  fix: string;
}

/** Every refusal: what went wrong (`reason`, `field`, `message`) and what to write instead (`fix`). */
export class SundialError extends Error implements SundialErrorShape {
  readonly reason: SundialErrorReason;
  readonly field?: string;
  readonly fix: string;

  constructor(shape: SundialErrorShape) {
    super(shape.message);
    this.name = 'SundialError';
    this.reason = shape.reason;
    this.field = shape.field;
    this.fix = shape.fix;
  }

  toJSON(): SundialErrorShape {
    const { reason, field, message, fix } = this;
    return field === undefined ? { reason, message, fix } : { reason, field, message, fix };
  }
}

export function isSundialError(error: unknown): error is SundialError {
  return error instanceof SundialError;
}
