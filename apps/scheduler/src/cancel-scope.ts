import { refusals } from '@sundial/core';

/** How to cancel on purpose, for each refusal below (docs/spec.md §5.2). */
const CANCEL_FIX =
  'Add ?prefix=<scope> (e.g. ?prefix=invoice:42:) to cancel the timers of a scope, or ?all=true to cancel every timer on purpose.';

/**
 * The scope `DELETE /v1/timers` cancels: a non-empty `prefix`, or every timer with `all=true` (the
 * `undefined` that `cancelAll` takes for all). A missing or empty `prefix` (`?prefix`, `?prefix=`) is
 * refused rather than read as "all": cancelling the whole cluster is never what a dropped value meant.
 */
export function cancelScope(prefix: string | undefined, all: string | undefined): string | undefined {
  if (all !== undefined) {
    if (all !== 'true') {
      throw refusals.invalid('all', `all must be "true", got "${all}"`, CANCEL_FIX);
    }
    if (prefix !== undefined) {
      throw refusals.invalid('prefix', 'DELETE /v1/timers takes a prefix or all=true, not both', CANCEL_FIX);
    }
    return undefined;
  }
  if (prefix === undefined || prefix === '') {
    throw refusals.invalid(
      'prefix',
      `DELETE /v1/timers needs a non-empty prefix (${prefix === undefined ? 'none was given' : 'it was empty'}); an empty one does not mean all`,
      CANCEL_FIX,
    );
  }
  return prefix;
}
