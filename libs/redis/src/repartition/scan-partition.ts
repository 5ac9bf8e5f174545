import type { Redis } from 'ioredis';
import { isCluster, type RedisClient } from '../infra/connection';

/**
 * The names that start with `base` (a partition base, or a queue's key prefix: on a Redis Cluster all in
 * one slot) and then match the glob `rest`, page by page, with SCAN on every primary: the keys a
 * partition does not index (tombstones, moving records, request records). `base` is matched as written,
 * so a prefix holding `*`, `?` or `[` never reaches another prefix's keys.
 */
export async function* scanPartition(
  redis: RedisClient,
  base: string,
  rest: string,
): AsyncGenerator<string[]> {
  const pattern = `${base.replace(/[*?[\]\\]/g, '\\$&')}${rest}`;
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
