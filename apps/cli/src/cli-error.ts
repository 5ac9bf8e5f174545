import type { SundialErrorDetail } from '@sundial/core';

/**
 * Why a command did not do what it was asked, in the API's own terms (reason, field, message, fix),
 * and the exit code that tells a script which kind of failure it was.
 */
export const EXIT = {
  ok: 0,
  /** the scheduler refused the request (4xx): its reason and fix are printed */
  refused: 1,
  /** the command line itself is wrong: unknown command, missing argument, bad flag */
  usage: 2,
  /** the scheduler could not be reached or answered 5xx: retrying may help */
  unavailable: 3,
} as const;

export interface ErrorFields {
  reason: string;
  field?: string;
  message: string;
  fix: string;
  /** what the refusal met, as the API sent it (docs/spec.md §2) */
  detail?: SundialErrorDetail;
}

export class CliError extends Error {
  readonly reason: string;
  readonly field?: string;
  readonly fix: string;
  readonly detail?: SundialErrorDetail;

  constructor(
    fields: ErrorFields,
    readonly exitCode: number,
    readonly status?: number,
  ) {
    super(fields.message);
    this.reason = fields.reason;
    this.field = fields.field;
    this.fix = fields.fix;
    this.detail = fields.detail;
  }

  toJSON(): ErrorFields & { status?: number } {
    return {
      reason: this.reason,
      ...(this.field !== undefined && { field: this.field }),
      message: this.message,
      fix: this.fix,
      ...(this.detail !== undefined && { detail: this.detail }),
      ...(this.status !== undefined && { status: this.status }),
    };
  }
}

export function usageError(message: string, fix: string): CliError {
  return new CliError({ reason: 'usage', message, fix }, EXIT.usage);
}
