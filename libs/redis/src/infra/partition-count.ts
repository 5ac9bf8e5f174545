import { refusals } from '@sundial/core';
import type { SundialKeys } from '../store/keys';
import type { RedisClient } from './connection';

/**
 * A repartition under way (`P:repartition`, docs/design.md "Repartition"): `preparing` while the old
 * count's writes are fenced off, `moving` once processes with the new count may work.
 */
export interface RepartitionRecord {
  from: number;
  to: number;
  state: 'preparing' | 'moving';
  startedAt: number;
}

/**
 * What Redis says of the layout: the stored count, the repartition under way (or null), and how many
 * repartitions finished (`P:repartitions`; 0 when none, or only releases before it repartitioned).
 */
export interface StoredLayout {
  count: number;
  repartition: RepartitionRecord | null;
  finished: number;
}

export async function readLayout(redis: RedisClient, keys: SundialKeys): Promise<StoredLayout> {
  const [count, repartition, finished] = await Promise.all([
    redis.get(keys.partitionCount),
    redis.get(keys.repartition),
    redis.get(keys.repartitions),
  ]);
  return {
    count: Number(count),
    repartition: repartition ? (JSON.parse(repartition) as RepartitionRecord) : null,
    finished: Number(finished),
  };
}

/**
 * The partition count is part of the data: a key's partition is `fnv1a32(key) mod P`, so a process
 * with another P would look for rows where they are not, create a second live row for a key, and leave
 * the first one firing. The first process to start on a prefix records its P (`P:partitions`); every
 * later one must have the same, or it refuses to start — except during a repartition, where processes
 * with the new count join it (resolves the repartition they join, else null) and the old count is refused.
 */
export async function checkPartitionCount(
  redis: RedisClient,
  keys: SundialKeys,
): Promise<RepartitionRecord | null> {
  await redis.set(keys.partitionCount, String(keys.partitions), 'NX');
  const { count, repartition } = await readLayout(redis, keys);
  const mine = keys.partitions;
  if (repartition) {
    if (repartition.to === mine && repartition.state === 'moving') return repartition;
    const { from, to, state } = repartition;
    throw refusals.repartitionUnderway(keys.prefix, from, to, mine, state === 'preparing');
  }
  if (count !== mine) throw refusals.partitionCount(keys.prefix, count, mine);
  return null;
}
