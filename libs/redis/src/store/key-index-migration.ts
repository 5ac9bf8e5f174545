import type { RedisClient } from '../infra/connection';
import type { SundialKeys } from './keys';
import { fenceValue } from './layout-fence';
import { runScript } from './script-loader';

/** Keys per migrate-keys.lua call: a page is one script, short enough not to hold Redis up. */
const PAGE = 1000;

/**
 * Converts the `keys` zsets a version before the chunked key index left (docs/operations.md
 * "Upgrading") into the key index, partition by partition, and marks each partition's layout fence so
 * that version's store writes are refused: migrate-keys.lua page by page until `keys` is gone (once per
 * partition with none). Idempotent and safe beside other processes doing the same; a partition cut off
 * midway is finished by the next call. Resolves the number of keys that were still in `keys`.
 * `redis` must have gone through `defineCommands`.
 */
export async function migrateKeyIndex(
  redis: RedisClient,
  keys: SundialKeys,
  partitions: readonly number[] = keys.all(),
): Promise<number> {
  const counts = await Promise.all(
    partitions.map(async (partition) => {
      const found = await redis.zcard(keys.legacyKeys(partition));
      for (let left = -1; left !== 0;) {
        left = Number(
          await runScript(
            redis,
            'migrate-keys',
            keys.base(partition),
            keys.ledgerSize,
            keys.prefix,
            fenceValue(keys.partitions),
            PAGE,
          ),
        );
      }
      return found;
    }),
  );
  return counts.reduce((sum, count) => sum + count, 0);
}
