import type { RedisClient } from '../infra/connection';
import type { SundialKeys } from './keys';
import { runScript } from './script-loader';

/** Fields per migrate-ids.lua call: a page is one script, short enough not to hold Redis up. */
const PAGE = 500;

/**
 * Converts the `ids` hashes a version before the live-id bitmaps left (docs/operations.md "Upgrading")
 * into bits, partition by partition: one EXISTS per partition when there is none (every start, every
 * reconciler pass), else migrate-ids.lua page by page until the hash is scanned through. Idempotent and
 * safe beside other processes doing the same; a partition cut off midway is finished by the next call.
 * Resolves the number of ids made live. `redis` must have gone through `defineCommands`.
 */
export async function migrateLiveIds(
  redis: RedisClient,
  keys: SundialKeys,
  partitions: readonly number[] = keys.all(),
): Promise<number> {
  const counts = await Promise.all(
    partitions.map(async (partition) => {
      if ((await redis.exists(keys.legacyIds(partition))) === 0) return 0;
      let live = 0;
      let cursor = '0';
      do {
        const reply = (await runScript(
          redis,
          'migrate-ids',
          keys.base(partition),
          keys.ledgerSize,
          keys.prefix,
          cursor,
          PAGE,
        )) as [string, number];
        cursor = reply[0];
        live += reply[1];
      } while (cursor !== '0');
      return live;
    }),
  );
  return counts.reduce((sum, count) => sum + count, 0);
}
