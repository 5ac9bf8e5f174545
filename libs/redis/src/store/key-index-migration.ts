import type { RedisClient } from '../infra/connection';
import type { SundialKeys } from './keys';
import { fenceValue } from './layout-fence';
import { runScript } from './script-loader';

/** Keys per migrate-keys.lua call: a page is one script, short enough not to hold Redis up. */
const PAGE = 1000;

/**
 * The one `keys` zset per partition that the versions before the chunked key index wrote becomes the
 * key index (docs/operations.md "Upgrading"), and each partition's layout fence is marked so that those
 * versions' store writes are refused. Every partition runs migrate-keys.lua at least once (the mark),
 * then page by page while `keys` holds any. Idempotent and safe beside other processes doing the same;
 * a partition cut off midway is finished by the next call. Resolves how many keys `keys` held in all.
 * `redis` must have gone through `defineCommands`.
 */
export async function migrateKeyIndex(
  redis: RedisClient,
  keys: SundialKeys,
  partitions: readonly number[] = keys.all(),
): Promise<number> {
  let found = 0;
  await Promise.all(
    partitions.map(async (partition) => {
      found += await redis.zcard(keys.legacyKeys(partition));
      const convertPage = () =>
        runScript(
          redis,
          'migrate-keys',
          keys.base(partition),
          keys.ledgerSize,
          keys.prefix,
          fenceValue(keys.partitions),
          PAGE,
        );
      while (Number(await convertPage()) > 0);
    }),
  );
  return found;
}
