import { refusals } from '../refusals';
import { showValue } from '../show-value';

/* The engine's own refusal wording (the rest is core's `refusals`, `inactive` among them: both backends
 * say it in one text): an engine option's range. */

/** An engine option in milliseconds: a finite number of 0 or more, or `invalid` naming it. */
export function checkMs(field: string, value: number, example: string): number {
  if (Number.isFinite(value) && value >= 0) return value;
  throw refusals.invalid(
    field,
    `${field} ${showValue(value)} is not a duration`,
    `Write ${field} as a number of milliseconds of 0 or more, e.g. ${example}.`,
  );
}
