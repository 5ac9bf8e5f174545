import type { ListOptions, TimerStatus } from '@sundial/core';
import { refusals } from '@sundial/core';

export interface ListQuery {
  prefix?: string;
  status?: string;
  limit?: string;
  cursor?: string;
  dueBefore?: string;
}

/** The query parameters each route takes (docs/spec.md §5.2); any other is refused. */
export const QUERY_PARAMETERS = {
  list: ['prefix', 'status', 'limit', 'cursor', 'dueBefore'],
  cancelAll: ['prefix'],
  history: ['limit'],
  next: ['count'],
  describe: ['count', 'limit'],
  preview: ['count'],
} as const;

/**
 * The query of a route that takes `known`, refused with `invalid` (field = the parameter) when it holds
 * any other: an unknown parameter is most often a typo (`prefx=`), and ignoring it would answer, or for
 * `DELETE /v1/timers` cancel, more than was asked.
 */
export function knownQuery<Name extends string>(
  route: string,
  query: Record<string, unknown>,
  known: readonly Name[],
): Partial<Record<Name, string>> {
  const unknown = Object.keys(query).find((name) => !(known as readonly string[]).includes(name));
  if (unknown !== undefined) throw refusals.unknownQueryParameter(unknown, route, known);
  return query as Partial<Record<Name, string>>;
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
 * A query value as a number for the TimersApi to check. Text that is not a number is passed on as it
 * is (the TimersApi checks its arguments' types at run time), so the refusal names what was sent —
 * `limit "abc" is not a whole number …` — not NaN.
 */
export function queryNumber(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const number = Number(value);
  return value.trim() !== '' && Number.isFinite(number) ? number : asChecked(value);
}

/** Epoch ms or an ISO 8601 instant; anything else is passed on as text, which list() refuses with field `dueBefore`. */
function parseInstant(text: string): number {
  const instant = /^\d+$/.test(text) ? Number(text) : Date.parse(text);
  return Number.isFinite(instant) ? instant : asChecked(text);
}

/** Text where the TimersApi's types say number: it refuses it, showing the text. */
function asChecked(text: string): number {
  return text as unknown as number;
}
