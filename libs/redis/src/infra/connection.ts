import { Redis, type RedisOptions } from 'ioredis';

/**
 * Where Redis is: a redis:// or rediss:// URL (ACL user and password included), ioredis options,
 * or both as `{ url, ...options }` (SPEC §5.1's `connection: { url }`).
 */
export type RedisConnection = string | (RedisOptions & { url?: string });

export function openRedis(connection: RedisConnection, overrides: RedisOptions = {}): Redis {
  if (typeof connection === 'string') return new Redis(connection, overrides);
  const { url, ...options } = connection;
  return url === undefined
    ? new Redis({ ...options, ...overrides })
    : new Redis(url, { ...options, ...overrides });
}

/** Closes politely, or drops the socket when Redis cannot be reached to say goodbye. */
export async function closeRedis(redis: Redis): Promise<void> {
  await redis.quit().catch(() => redis.disconnect());
}
