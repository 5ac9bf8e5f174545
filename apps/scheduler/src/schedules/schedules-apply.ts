import {
  eachInFlight,
  ensureOwnedRow,
  isSundialError,
  listOwnedRows,
  removeOwnedRows,
  type SundialLogger,
  type TimersApi,
} from '@sundial/core';
import { type FileRow, type SchedulesProblem, schedulesOwner } from './schedules-file';

/** What one apply did: the problems of rows the store refused, and how many rows it wrote and removed. */
export interface AppliedSchedules {
  problems: SchedulesProblem[];
  written: number;
  removed: number;
}

/**
 * Makes the timers say what the file's valid rows say (docs/spec.md §5.1): one listing of the owned
 * rows, then only the rows that differ from it are written, `OWNED_ROWS_IN_FLIGHT` at a time, and the
 * owned rows no longer in the file (nor among the refused keys, `untouched`) are cancelled. A row costs
 * one write (a key held by another's row: a read more), a row the listing shows unchanged nothing: an edit of one row of 500 writes one row, and a replica
 * that finds its rows written by another writes nothing. `remove: false` writes and removes nothing else
 * (the rows last applied, written again after a reset while the file is not applied). Throws when Redis
 * is unavailable.
 */
export async function applySchedules(
  timers: TimersApi,
  rows: readonly FileRow[],
  untouched: ReadonlySet<string>,
  logger: SundialLogger,
  { remove = true }: { remove?: boolean } = {},
): Promise<AppliedSchedules> {
  const listed = await listOwnedRows(timers, schedulesOwner);
  const stale = rows.filter(({ spec }) => {
    const row = listed.get(spec.key);
    return !row || !schedulesOwner.matches(row, spec);
  });
  const outcomes = await eachInFlight(stale, async ({ row, spec }) => {
    try {
      return {
        row,
        key: spec.key,
        outcome: await ensureOwnedRow(timers, spec, schedulesOwner, listed.get(spec.key) ?? null),
      };
    } catch (error) {
      // A row the store refuses (e.g. a cron without a next slot): reported like an invalid one.
      if (!isSundialError(error) || error.reason === 'unavailable') throw error;
      return { row, key: spec.key, refused: { row, key: spec.key, ...error.toJSON() } };
    }
  });
  const problems: SchedulesProblem[] = [];
  let written = 0;
  for (const { row, key, outcome, refused } of outcomes) {
    if (refused) problems.push(refused);
    if (outcome === 'written') {
      written++;
      logger.info('schedules file: row applied', { key });
    }
    if (outcome === 'foreign') {
      problems.push({
        reason: 'duplicate-key',
        field: 'key',
        row,
        key,
        message: `The key ${key} holds a timer not created from the schedules file (through the API, or a @DistributedCron row); it is left as it is.`,
        fix: `Give the row another key, or cancel ${key} if it is a leftover.`,
      });
    }
  }
  if (!remove) return { problems, written, removed: 0 };
  const keep = new Set([...untouched, ...rows.map(({ spec }) => spec.key)]);
  const removed = await removeOwnedRows(timers, schedulesOwner, keep, undefined, listed);
  for (const key of removed) logger.info('schedules file: row removed, its timer cancelled', { key });
  return { problems, written, removed: removed.length };
}
