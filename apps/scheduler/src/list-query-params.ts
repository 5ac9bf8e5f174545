import type { ListOptions, TimerStatus } from '@sundial/core';

export interface ListQuery {
  prefix?: string;
  status?: string;
  limit?: string;
  cursor?: string;
}

/** Query strings are text: convert them to `ListOptions`; the TimersApi validates the values. */
export function parseListQuery({ prefix, status, limit, cursor }: ListQuery): ListOptions {
  return {
    ...(prefix ? { prefix } : {}),
    ...(status === undefined ? {} : { status: status as TimerStatus }),
    // A limit that is not a number becomes NaN, which list() refuses with field `limit`.
    ...(limit === undefined ? {} : { limit: limit === '' ? Number.NaN : Number(limit) }),
    ...(cursor ? { cursor } : {}),
  };
}
