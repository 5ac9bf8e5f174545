import { SundialError } from '../errors';
import { refusals } from '../refusals';
import { showValue } from '../show-value';
import type { Entry } from './entry';

/* The engine's own refusal wording (the rest is core's `refusals`): which operation a running or paused
 * timer refuses and what to do instead, and the batch index of a refused spec. */

export function inactive(
  entry: Entry,
  done: string,
  status: 'running' | 'paused',
  instead: 'replace' | 'resume' | 'wait',
): SundialError {
  const fixes = {
    replace: "Wait for the run to end, or schedule the key again with ifExists: 'replace' to supersede it.",
    resume: 'Resume it first.',
    wait: 'Wait for the run to end; listen for its completed or failed event.',
  };
  return new SundialError({
    reason: 'inactive',
    field: 'key',
    message: `the timer "${entry.key}" cannot be ${done} while it is ${status}`,
    fix: fixes[instead],
    detail: { status },
  });
}

/** Names the spec an error in a batch came from: `specs[3].delay`. */
export function atIndex(error: unknown, index: number): unknown {
  if (!(error instanceof SundialError)) return error;
  const field = error.field === undefined ? `specs[${index}]` : `specs[${index}].${error.field}`;
  return new SundialError({
    reason: error.reason,
    field,
    message: `specs[${index}]: ${error.message}`,
    fix: error.fix,
  });
}

/** An engine option in milliseconds: a finite number of 0 or more, or `invalid` naming it. */
export function checkMs(field: string, value: number, example: string): number {
  if (Number.isFinite(value) && value >= 0) return value;
  throw refusals.invalid(
    field,
    `${field} ${showValue(value)} is not a duration`,
    `Write ${field} as a number of milliseconds of 0 or more, e.g. ${example}.`,
  );
}
