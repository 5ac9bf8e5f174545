import { checkDueBefore } from '../due-order';
import { refusals } from '../refusals';
import { showValue } from '../show-value';
import type { ListOptions, TimerStatus } from '../types';
import { validateScope } from '../names';
import type { ListQuery } from './entry-store';

const STATUSES: readonly TimerStatus[] = ['pending', 'running', 'paused', 'completed', 'failed', 'cancelled'];
export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;

/** Validates `list()` options and applies the defaults. */
export function toListQuery(options: ListOptions = {}): ListQuery {
  const { prefix, status, limit = DEFAULT_LIST_LIMIT, cursor } = options;
  if (status !== undefined && !STATUSES.includes(status)) {
    throw refusals.invalid(
      'status',
      `status ${showValue(status)} is not a timer status`,
      `Write one of ${STATUSES.join(', ')}.`,
    );
  }
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw refusals.invalid(
      'limit',
      `limit ${showValue(limit)} is not a whole number from 1 to ${MAX_LIST_LIMIT}`,
      `Write limit as a whole number from 1 to ${MAX_LIST_LIMIT}, e.g. ${DEFAULT_LIST_LIMIT}.`,
    );
  }
  if (cursor !== undefined && typeof cursor !== 'string') {
    throw refusals.invalid(
      'cursor',
      `cursor ${showValue(cursor)} is not a string`,
      'Pass the nextCursor of the previous page.',
    );
  }
  const dueBefore = checkDueBefore(options);
  return { prefix: validateScope(prefix), status, limit, cursor, dueBefore };
}
