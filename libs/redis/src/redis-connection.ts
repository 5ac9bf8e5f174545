import { Redis, type RedisOptions } from 'ioredis';

/**
 * Where Redis is: a redis:// or rediss:// URL (ACL user and password included), ioredis options,
 * or both as `{ url, ...options }` (SPEC §5.1's `connection: { url }`).
 */
export type RedisConnection = string | (RedisOptions & { url?: string });

export function openRedis(connection: RedisConnection, overrides: RedisOptions = {}): Redis {
  if (typeof connection === 'string') return withErrorListener(new Redis(connection, overrides));
  const { url, ...options } = connection;
  return withErrorListener(
    url === undefined
      ? new Redis({ ...options, ...overrides })
      : new Redis(url, { ...options, ...overrides }),
  );
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
