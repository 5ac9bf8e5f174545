import { SundialError } from './errors';
import { refusals } from './refusals';
import { showValue } from './show-value';
import type { ListOptions } from './types';

/** A page position in due order: the due and key of the last timer returned. */
export interface DuePosition {
  due: number;
  key: string;
}

/**
 * Checks the `dueBefore` of `list()` options (docs/spec.md §3.6), shared by both backends: a finite
 * epoch-ms number, and no `status` other than `pending` (only pending timers have a due to wait for).
 */
export function checkDueBefore(options: ListOptions): number | undefined {
  const { dueBefore, status } = options;
  if (dueBefore === undefined) return undefined;
  if (typeof dueBefore !== 'number' || !Number.isFinite(dueBefore)) {
    throw refusals.invalid(
      'dueBefore',
      `dueBefore ${showValue(dueBefore)} is not an instant`,
      'Pass dueBefore as epoch milliseconds (over HTTP: epoch ms or an ISO 8601 instant).',
    );
  }
  if (status !== undefined && status !== 'pending') {
    throw new SundialError({
      reason: 'invalid',
      field: 'status',
      message: `dueBefore lists pending timers only, but status is ${showValue(status)}`,
      fix: 'Omit status (or pass status=pending) with dueBefore.',
      detail: { code: 'due-before-status' },
    });
  }
  return dueBefore;
}

/** Orders positions by due, then key: the order of a `dueBefore` listing. */
export function compareDue(a: DuePosition, b: DuePosition): number {
  return a.due - b.due || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}
