import { Redis, type RedisOptions } from 'ioredis';

/** Where Redis is: a redis:// or rediss:// URL (ACL user and password included), or ioredis options. */
export type RedisConnection = string | RedisOptions;

export function openRedis(connection: RedisConnection, overrides: RedisOptions = {}): Redis {
  return typeof connection === 'string'
    ? new Redis(connection, overrides)
    : new Redis({ ...connection, ...overrides });
}

/** Closes politely, or drops the socket when Redis cannot be reached to say goodbye. */
export async function closeRedis(redis: Redis): Promise<void> {
  await redis.quit().catch(() => redis.disconnect());
}
