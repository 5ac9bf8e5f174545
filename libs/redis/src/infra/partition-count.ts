import { refusals } from '@sundial/core';
import type { SundialKeys } from '../store/keys';
import type { RedisClient } from './connection';

/**
 * The partition count is part of the data: a key's partition is `fnv1a32(key) mod P`, so a process
 * with another P would look for rows where they are not, create a second live row for a key, and leave
 * the first one firing. The first process to start on a prefix records its P (`P:partitions`); every
 * later one must have the same, or it refuses to start.
 */
export async function checkPartitionCount(redis: RedisClient, keys: SundialKeys): Promise<void> {
  const key = keys.partitionCount;
  await redis.set(key, String(keys.partitions), 'NX');
  const stored = Number(await redis.get(key));
  if (stored !== keys.partitions) {
    throw refusals.invalid(
      'partitions',
      `The timers under prefix '${keys.prefix}' are spread over ${stored} partitions, and this process was started with ${keys.partitions}: it would not find their rows.`,
      `Start every process with SUNDIAL_PARTITIONS=${stored} (option partitions: ${stored}). To change the count, move the timers to a new prefix (schedule them again under it) or start on an empty Redis.`,
    );
  }
}
