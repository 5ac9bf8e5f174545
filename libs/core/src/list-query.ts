import { checkDueBefore } from './due-order';
import { validateScope } from './names';
import { refusals } from './refusals';
import { showValue } from './show-value';
import type { ListOptions, TimerStatus } from './types';

/** `list()` options checked, with their defaults: what each backend lists by. */
export interface ListQuery {
  prefix: string;
  status?: TimerStatus;
  limit: number;
  cursor?: string;
  dueBefore?: number;
}

const STATUSES: readonly TimerStatus[] = ['pending', 'running', 'paused', 'completed', 'failed', 'cancelled'];
export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;

/**
 * Validates `list()` options and applies the defaults (docs/spec.md §3.6): one rule for both backends, so
 * a refusal is the same text on each and names the first bad field in the same order.
 */
export function toListQuery(options: ListOptions = {}): ListQuery {
  const { status, limit = DEFAULT_LIST_LIMIT, cursor } = options;
  const prefix = validateScope(options.prefix);
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
  return { prefix, status, limit, cursor, dueBefore };
}
