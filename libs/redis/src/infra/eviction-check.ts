import { ReplyError } from 'ioredis';
import type { RedisClient } from './connection';

/**
 * Warns when Redis may evict timers (`maxmemory-policy` other than `noeviction`, docs/spec.md §4.1).
 * CONFIG may be disabled on managed Redis: then the check is skipped.
 */
export async function warnUnlessNoEviction(
  redis: RedisClient,
  warn: (message: string) => void,
): Promise<void> {
  try {
    const [, policy] = (await redis.config('GET', 'maxmemory-policy')) as string[];
    if (policy && policy !== 'noeviction') {
      warn(
        `Redis maxmemory-policy is '${policy}': under memory pressure Redis may evict timers. Set it to 'noeviction'.`,
      );
    }
  } catch (error) {
    if (!(error instanceof ReplyError)) throw error;
  }
}
