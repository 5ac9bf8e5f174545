import { isSundialError } from './errors';
import { requestFingerprint } from './request-id';
import type { Timer, TimersApi, TimerSpec } from './types';

/**
 * A declarative source of rows (docs/spec.md §5.1: the `@DistributedCron` registrar, the scheduler's
 * `schedules.yaml` follower). It marks the rows it writes in their `meta`; timers created through the
 * API carry no mark and are never changed or removed by it.
 */
export interface RowOwner {
  /** the row carries this owner's mark */
  owns(timer: Timer): boolean;
  /** the row already says what `spec` says: nothing to write */
  matches(timer: Timer, spec: TimerSpec): boolean;
}

/** What `ensureOwnedRow` did: nothing, a create or replace, or nothing because another owner holds the key. */
export type EnsureOutcome = 'unchanged' | 'written' | 'foreign';

/** A create that loses a race (duplicate-key) looks at the winner's row again, this many times at most. */
const ATTEMPTS = 3;

/**
 * Makes the row of `spec.key` say what `spec` says: created when missing, replaced when it differs.
 * Replicas doing this at once converge on one row, written once: the create that loses finds the
 * winner's row, which matches, and a replace carries a `requestId` naming the row it replaces and what
 * it writes, so the replicas that read the same old row at once replace it once (the others' calls
 * return the first's result). A key held by a row without the owner's mark is left alone (`'foreign'`).
 * `listed` is the row a listing the caller just made found under the key (null: none of the owner's),
 * so the first attempt needs no read; a create that meets another's row reads it then.
 */
export async function ensureOwnedRow(
  timers: TimersApi,
  spec: TimerSpec,
  owner: RowOwner,
  listed?: Timer | null,
): Promise<EnsureOutcome> {
  let lost: unknown;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const row = attempt === 0 && listed !== undefined ? listed : await timers.get(spec.key);
    if (row && !owner.owns(row)) return 'foreign';
    if (row && owner.matches(row, spec)) return 'unchanged';
    try {
      // ownedRow: the one write allowed to carry the owner mark (`meta.sundialOwner`, ./owner-mark).
      if (!row) await timers.schedule({ ...spec, ifExists: 'error' }, { ownedRow: true });
      else {
        const requestId = `owned-row:${row.id}:${requestFingerprint('replace', [spec])}`;
        await timers.schedule({ ...spec, ifExists: 'replace' }, { requestId, ownedRow: true });
      }
      return 'written';
    } catch (error) {
      if (!isSundialError(error) || error.reason !== 'duplicate-key') throw error;
      lost = error;
    }
  }
  throw lost;
}

/** Calls at most this many of a declarative source's writes at once: a file of 500 rows is not 500 round trips in a row. */
export const OWNED_ROWS_IN_FLIGHT = 32;

/** Runs `work` on every item, `OWNED_ROWS_IN_FLIGHT` at a time; resolves with the results in order. */
export async function eachInFlight<T, R>(items: readonly T[], work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(OWNED_ROWS_IN_FLIGHT, items.length) }, lane));
  return results;
}

/** Every row of `owner` (under `prefix`) by key: one listing pass, pages of 500. */
export async function listOwnedRows(
  timers: TimersApi,
  owner: RowOwner,
  prefix?: string,
): Promise<Map<string, Timer>> {
  const owned = new Map<string, Timer>();
  let cursor: string | undefined;
  do {
    const page = await timers.list({ prefix, cursor, limit: 500 });
    for (const row of page.items) if (owner.owns(row)) owned.set(row.key, row);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return owned;
}

/**
 * Cancels every row of `owner` (under `prefix`) whose key is not in `keep`; returns the keys it cancelled.
 * `listed` is a listing the caller already made (`listOwnedRows`), so that the rows are not read twice.
 */
export async function removeOwnedRows(
  timers: TimersApi,
  owner: RowOwner,
  keep: ReadonlySet<string>,
  prefix?: string,
  listed?: ReadonlyMap<string, Timer>,
): Promise<string[]> {
  const owned = listed ?? (await listOwnedRows(timers, owner, prefix));
  // Cancelled after the listing, so the pages are not read while they change. A key another replica
  // cancelled first is not returned: each removal is reported by the replica that made it.
  const orphans = [...owned.keys()].filter((key) => !keep.has(key));
  const cancelled = await eachInFlight(orphans, (key) => timers.cancel(key));
  return orphans.filter((_, index) => cancelled[index]);
}
