import type { RedisClient } from '../infra/connection';
import type { SundialKeys } from './keys';
import { runScript } from './script-loader';

/**
 * Up to `limit` keys of a partition's key index (commands/includes/key-index.lua: sorted chunks, not one
 * zset) from `min` to `max` in order, both in ZRANGEBYLEX's notation ('-', '+', '[key', '(key'): one
 * key-range.lua call. `redis` must have gone through `defineCommands`.
 */
export async function keyRange(
  redis: RedisClient,
  keys: SundialKeys,
  partition: number,
  min: string,
  max: string,
  limit: number,
): Promise<string[]> {
  return (await runScript(
    redis,
    'key-range',
    keys.base(partition),
    keys.ledgerSize,
    keys.prefix,
    min,
    max,
    limit,
  )) as string[];
}
