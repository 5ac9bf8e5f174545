import { SundialError } from '../errors';
import { refusals } from '../refusals';
import { showValue } from '../show-value';
import type { Entry } from './entry';

/* The engine's own refusal wording (the rest is core's `refusals`): which operation a running or paused
 * timer refuses and what to do instead, and an engine option's range. */

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

/** An engine option in milliseconds: a finite number of 0 or more, or `invalid` naming it. */
export function checkMs(field: string, value: number, example: string): number {
  if (Number.isFinite(value) && value >= 0) return value;
  throw refusals.invalid(
    field,
    `${field} ${showValue(value)} is not a duration`,
    `Write ${field} as a number of milliseconds of 0 or more, e.g. ${example}.`,
  );
}
