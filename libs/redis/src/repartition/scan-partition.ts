import { refusals } from '@sundial/core';
import { type Redis, ReplyError } from 'ioredis';
import { isCluster, primaries, type RedisClient } from '../infra/connection';

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

/**
 * Resolves when every primary lets this user SCAN (one step of one key), else refuses: an ACL user
 * with only the apps' commands (docs/operations.md "A least-privilege ACL user") is told so before the
 * repartition writes anything, instead of failing once the old count's writes are fenced.
 */
export async function checkScanAllowed(redis: RedisClient): Promise<void> {
  for (const node of await primaries(redis)) {
    try {
      await node.scan('0', 'COUNT', 1);
    } catch (error) {
      const reply = error instanceof ReplyError ? (error as Error).message : '';
      if (/^NOPERM/.test(reply)) throw refusals.repartitionScanRefused(reply);
      // the first command: a wrong user or password shows here, before anything was changed
      if (/^(WRONGPASS|NOAUTH)/.test(reply)) throw refusals.repartitionAuthRefused(reply);
      throw error;
    }
  }
}
