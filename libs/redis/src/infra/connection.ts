import { Redis, type RedisOptions } from 'ioredis';

/**
 * Where Redis is: a redis:// or rediss:// URL (ACL user and password included), ioredis options,
 * or both as `{ url, ...options }` (docs/spec.md §5.1's `connection: { url }`).
 */
export type RedisConnection = string | (RedisOptions & { url?: string });

/**
 * ioredis 6 waits up to 5 s (plus jitter) between reconnect attempts; Sundial keeps ioredis 5's
 * cadence of at most 2 s unless the connection options say otherwise: the dispatcher and workers are
 * back within 2 s of Redis after an outage, and a command issued during one fails after its 20
 * retries in about 10 s instead of 70 s, so closing an app stays within its shutdown deadline.
 */
const reconnectDelayMs = (attempt: number): number => Math.min(attempt * 50, 2_000);

export function openRedis(connection: RedisConnection, overrides: RedisOptions = {}): Redis {
  if (typeof connection === 'string') {
    return withErrorListener(new Redis(connection, { retryStrategy: reconnectDelayMs, ...overrides }));
  }
  const { url, ...options } = connection;
  const merged = { retryStrategy: reconnectDelayMs, ...options, ...overrides };
  return withErrorListener(url === undefined ? new Redis(merged) : new Redis(url, merged));
}

/**
 * Every connection needs an `error` listener: without one ioredis prints a non-JSON
 * `[ioredis] Unhandled error event` stack trace on each reconnect attempt during an outage. The
 * errors themselves are not lost: every command that fails meanwhile rejects, and its caller
 * answers `unavailable` or logs it with its context. `duplicate()` copies no listeners: call this on
 * a duplicate too.
 */
export function withErrorListener(redis: Redis): Redis {
  redis.on('error', () => undefined);
  return redis;
}

/** Closes politely, or drops the socket when Redis cannot be reached to say goodbye. */
export async function closeRedis(redis: Redis): Promise<void> {
  await redis.quit().catch(() => redis.disconnect());
}
