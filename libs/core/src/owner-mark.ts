import { refusals } from './refusals';
import type { JsonObject } from './types';

/**
 * The `meta` key a declarative source marks its rows with (docs/spec.md §5.1: `'schedules-file'`,
 * `'distributed-cron'`); a row carrying it is that source's to replace and remove.
 */
export const OWNER_META_KEY = 'sundialOwner';

/**
 * Refuses the owner mark on a write that is not an owner's (`WriteOptions.ownedRow`): a timer created
 * through the API with it would be taken for the source's row, and removed by it as an orphan.
 */
export function refuseOwnerMark(meta: JsonObject | undefined): void {
  if (meta === undefined || !Object.hasOwn(meta, OWNER_META_KEY)) return;
  throw refusals.invalid(
    `meta.${OWNER_META_KEY}`,
    `meta.${OWNER_META_KEY} marks the rows the schedules file and @DistributedCron own; a timer written otherwise may not carry it`,
    `Rename meta.${OWNER_META_KEY} (e.g. meta.owner); to have the schedules file own the timer, add its row to the file.`,
  );
}
