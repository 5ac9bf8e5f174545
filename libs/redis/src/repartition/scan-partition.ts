import type { Redis } from 'ioredis';
import { isCluster, type RedisClient } from '../infra/connection';

/**
 * The names matching `pattern` (which starts with a partition base, so on a Redis Cluster they are all
 * in one slot), page by page, with SCAN on every primary: the keys a partition does not index
 * (tombstones, moving records, request records).
 */
export async function* scanPartition(redis: RedisClient, pattern: string): AsyncGenerator<string[]> {
  const nodes: Redis[] = isCluster(redis) ? redis.nodes('master') : [redis];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, names] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      cursor = next;
      if (names.length > 0) yield names;
    } while (cursor !== '0');
  }
}
