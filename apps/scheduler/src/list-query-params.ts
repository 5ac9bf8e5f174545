import { type ListOptions, normalizeAt, type TimerStatus } from '@sundial/core';

/** The query of `GET /v1/timers`, each value one string (RouteInputGuard refused the rest). */
export interface ListQuery {
  prefix?: string;
  status?: string;
  limit?: string;
  cursor?: string;
  dueBefore?: string;
}

/** Query strings are text: convert them to `ListOptions`; the TimersApi validates the values. */
export function parseListQuery({ prefix, status, limit, cursor, dueBefore }: ListQuery): ListOptions {
  return {
    ...(prefix ? { prefix } : {}),
    ...(status === undefined ? {} : { status: status as TimerStatus }),
    ...(limit === undefined ? {} : { limit: queryNumber(limit) }),
    ...(cursor ? { cursor } : {}),
    ...(dueBefore === undefined ? {} : { dueBefore: parseInstant(dueBefore) }),
  };
}

/**
 * A query value as a number for the TimersApi to check: decimal digits, with a minus or a fraction
 * (which it refuses as not whole). Anything else is passed on as it is (the TimersApi checks its
 * arguments' types at run time), so the refusal names what was sent — `limit "abc" is not a whole
 * number …` — not NaN; nor Number()'s reading of it, which took `0x10` as 16, `1e2` as 100, ` 5` as 5.
 */
export function queryNumber(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  return /^-?\d+(\.\d+)?$/.test(value) ? Number(value) : asChecked(value);
}

/**
 * Epoch ms or an ISO 8601 instant with its zone (`normalizeAt`, as `at` is read: one without a zone
 * names a wall time, and is refused saying so). Anything else is passed on as text, which list()
 * refuses with field `dueBefore` — not `Date.parse`, which makes an instant of nearly any text
 * (`hello 2`, `2030`, `12/25`) and reads a zone-less time on the server's clock.
 */
function parseInstant(text: string): number {
  if (/^\d+$/.test(text)) return Number(text);
  return /^\d{4}-\d{2}-\d{2}/.test(text) ? normalizeAt(text, 'dueBefore') : asChecked(text);
}

/** Text where the TimersApi's types say number: it refuses it, showing the text. */
function asChecked(text: string): number {
  return text as unknown as number;
}
