import { isSundialError } from './errors';
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
 * Replicas doing this at once converge on one row: the create that loses finds the winner's row, which
 * matches. A key held by a row without the owner's mark is left alone (`'foreign'`).
 */
export async function ensureOwnedRow(
  timers: TimersApi,
  spec: TimerSpec,
  owner: RowOwner,
): Promise<EnsureOutcome> {
  let lost: unknown;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const row = await timers.get(spec.key);
    if (row && !owner.owns(row)) return 'foreign';
    if (row && owner.matches(row, spec)) return 'unchanged';
    try {
      await timers.schedule({ ...spec, ifExists: row ? 'replace' : 'error' });
      return 'written';
    } catch (error) {
      if (!isSundialError(error) || error.reason !== 'duplicate-key') throw error;
      lost = error;
    }
  }
  throw lost;
}

/** Cancels every row of `owner` (under `prefix`) whose key is not in `keep`; returns the keys cancelled. */
export async function removeOwnedRows(
  timers: TimersApi,
  owner: RowOwner,
  keep: ReadonlySet<string>,
  prefix?: string,
): Promise<string[]> {
  const orphans: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await timers.list({ prefix, cursor, limit: 500 });
    for (const row of page.items) if (owner.owns(row) && !keep.has(row.key)) orphans.push(row.key);
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  // Cancelled after the listing, so the pages are not read while they change.
  for (const key of orphans) await timers.cancel(key);
  return orphans;
}
