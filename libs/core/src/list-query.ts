import { badCursor, checkDueBefore } from './due-order';
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

/**
 * The opaque cursor of a listing in key order, the same on both backends (docs/spec.md §3.6): base64url
 * of `{ after: the last key the listing went past }`. The engine's was that key as it is, so it took any
 * text as a cursor where Redis refused one it had not returned.
 */
export function encodeKeyCursor(after: string): string {
  return Buffer.from(JSON.stringify({ after })).toString('base64url');
}

/**
 * The key a cursor names, null for none. A cursor of the Redis releases that listed partition by
 * partition (`[partition, key]`) is refused like any other that is not one: its position cannot be told
 * in key order across partitions (the partitions before its own were walked past its key, those after
 * it not begun), so going on from it would repeat or lose keys; starting over is what the fix says.
 */
export function decodeKeyCursor(cursor: string | undefined): string | null {
  if (cursor === undefined || cursor === '') return null;
  try {
    const decoded = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as unknown;
    if (isCursor(decoded)) return decoded.after;
  } catch {
    // fall through to the refusal
  }
  throw badCursor();
}

function isCursor(value: unknown): value is { after: string } {
  return (
    typeof value === 'object' && value !== null && typeof (value as { after?: unknown }).after === 'string'
  );
}
