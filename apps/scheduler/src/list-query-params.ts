import type { ListOptions, TimerStatus } from '@sundial/core';

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
    // A limit that is not a number becomes NaN, which list() refuses with field `limit`.
    ...(limit === undefined ? {} : { limit: limit === '' ? Number.NaN : Number(limit) }),
    ...(cursor ? { cursor } : {}),
    ...(dueBefore === undefined ? {} : { dueBefore: parseInstant(dueBefore) }),
  };
}

/** Epoch ms or an ISO 8601 instant; anything else becomes NaN, which list() refuses with field `dueBefore`. */
function parseInstant(text: string): number {
  return /^\d+$/.test(text) ? Number(text) : Date.parse(text);
}
