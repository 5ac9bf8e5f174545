import type { RedisConnection } from './connection';

/**
 * ioredis's `keyPrefix` on a connection (a client's own options, or options given as they are), else
 * undefined. Sundial names its keys with its own `prefix`: a connection that prefixes them again puts the
 * timers where the stock apps, which connect without it, never look, and BullMQ refuses it outright.
 */
export function connectionKeyPrefix(connection: RedisConnection | object | undefined): string | undefined {
  if (typeof connection !== 'object' || connection === null) return undefined;
  type Prefixed = { keyPrefix?: unknown; redisOptions?: { keyPrefix?: unknown } };
  // a client (Redis or Cluster) holds its options; options are given as they are
  const options = (
    typeof (connection as { duplicate?: unknown }).duplicate === 'function'
      ? (connection as { options?: Prefixed }).options
      : connection
  ) as Prefixed | undefined;
  const keyPrefix = options?.keyPrefix || options?.redisOptions?.keyPrefix;
  return typeof keyPrefix === 'string' && keyPrefix !== '' ? keyPrefix : undefined;
}
