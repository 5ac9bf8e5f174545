import { createHash } from 'node:crypto';
import {
  isSundialError,
  type JsonObject,
  type NormalizedSpec,
  normalizeSpec,
  refusals,
  type RowOwner,
  type SundialErrorShape,
  type TimerSpec,
  type SpecLimits,
  stableJson,
} from '@sundial/core';

/** The `meta.sundialOwner` of the rows the follower writes; API timers never carry it. */
export const SCHEDULES_OWNER_MARKER = 'schedules-file';
/** `meta` keys the follower writes on its rows, so a row of the file may not set them. */
const RESERVED_META = ['sundialOwner', 'sundialRow'];

/** Rows written from the file; one matches when it was written from the same row (its hash). */
export const schedulesOwner: RowOwner = {
  owns: (timer) => timer.meta?.sundialOwner === SCHEDULES_OWNER_MARKER,
  matches: (timer, spec) => timer.meta?.sundialRow === spec.meta?.sundialRow,
};

/** Something in the file that is not applied: the whole file (no `row`) or one row. */
export interface SchedulesProblem extends SundialErrorShape {
  /** 1-based position of the row in `timers` */
  row?: number;
  key?: string;
}

/** A valid row, ready for `schedule`. */
export interface FileRow {
  /** 1-based position in `timers` */
  row: number;
  spec: TimerSpec;
}

export interface SchedulesRead {
  /** the rows to apply; null when the file as a whole is refused */
  rows: FileRow[] | null;
  problems: SchedulesProblem[];
  /** keys of refused rows: their timers stay as they are, neither applied nor removed */
  untouched: Set<string>;
}

const EXAMPLE =
  'timers:\n  - key: reports:daily\n    handler: report.daily\n    cron: "0 6 * * *"\n    tz: UTC';

/**
 * Reads a schedules file (docs/spec.md §5.4, `SUNDIAL_SCHEDULES_FILE`): YAML with one top-level `timers`
 * list of rows in the TimerSpec shape. Each row is validated as `schedule` validates it; a refused row is
 * reported with its reason, field and fix and left out, the others still apply. What the follower adds:
 * `removeOnComplete: false` (a finished row stays, so it is not scheduled again until the row changes)
 * and `meta.sundialOwner` / `meta.sundialRow` (the row's hash, how a changed row is told apart).
 */
export function readSchedules(text: string, limits: SpecLimits): SchedulesRead {
  const list = topLevelRows(text);
  if (!Array.isArray(list)) return { rows: null, problems: [list], untouched: new Set() };
  const rows: FileRow[] = [];
  const problems: SchedulesProblem[] = [];
  const untouched = new Set<string>();
  const positions = rowsByKey(list);
  list.forEach((row: unknown, index) => {
    const key = keyOf(row);
    try {
      // Every row of a key given twice is refused, not the first applied: which one is meant is not
      // for the follower to guess, and a row added above an existing one would otherwise replace it.
      const others = key === undefined ? [] : (positions.get(key) ?? []).filter((at) => at !== index + 1);
      if (others.length > 0) {
        throw refusals.invalid(
          'key',
          `the key ${key} is on row ${others.join(', ')} too; its timer stays as it is`,
          'Give each row its own key.',
        );
      }
      rows.push({ row: index + 1, spec: rowSpec(row, limits) });
    } catch (error) {
      if (!isSundialError(error)) throw error;
      problems.push({ row: index + 1, ...(key !== undefined && { key }), ...error.toJSON() });
      if (key !== undefined) untouched.add(key);
    }
  });
  return { rows, problems, untouched };
}

function topLevelRows(text: string): unknown[] | SchedulesProblem {
  // Loaded only when a schedules file is read: yaml is some 70 modules (~50 ms CPU) that a scheduler
  // without SUNDIAL_SCHEDULES_FILE (the default) would load at every start for nothing.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { parse } = require('yaml') as typeof import('yaml');
  let document: unknown;
  try {
    // `merge`: rows may share fields through an anchor and `<<: *anchor`, as YAML written for GitOps does
    document = parse(text, { merge: true });
  } catch (error) {
    return fileProblem(`it is not YAML: ${(error as Error).message}`, 'Fix the YAML syntax.');
  }
  if (document === null || typeof document !== 'object' || Array.isArray(document)) {
    return fileProblem('it has no top-level timers list', `Write the rows as:\n${EXAMPLE}`);
  }
  const { timers, ...others } = document as Record<string, unknown>;
  const unknown = Object.keys(others);
  if (unknown.length > 0) {
    return fileProblem(`it has ${unknown.join(', ')} beside timers`, 'Keep only the timers list.');
  }
  if (!Array.isArray(timers)) {
    return fileProblem('timers is not a list', `Write the rows as:\n${EXAMPLE}\n(timers: [] for none)`);
  }
  return timers;
}

function fileProblem(message: string, fix: string): SchedulesProblem {
  return { reason: 'invalid', message: `The schedules file is not applied: ${message}.`, fix };
}

/** key → the 1-based rows that give it */
function rowsByKey(list: unknown[]): Map<string, number[]> {
  const positions = new Map<string, number[]>();
  list.forEach((row, index) => {
    const key = keyOf(row);
    if (key !== undefined) positions.set(key, [...(positions.get(key) ?? []), index + 1]);
  });
  return positions;
}

function keyOf(row: unknown): string | undefined {
  const key = (row as { key?: unknown } | null)?.key;
  return typeof key === 'string' ? key : undefined;
}

/** A valid row as the spec the follower schedules; throws the SundialError that refuses it. */
function rowSpec(row: unknown, limits: SpecLimits): TimerSpec {
  const normalized = normalizeSpec(row, limits);
  const spec = row as TimerSpec;
  if (spec.ifExists !== undefined) {
    throw refusals.invalid(
      'ifExists',
      'a row of the schedules file has no ifExists: the follower creates, replaces and removes its rows',
      'Remove ifExists.',
    );
  }
  if (spec.removeOnComplete === true) {
    throw refusals.invalid(
      'removeOnComplete',
      'a row of the schedules file is kept when it finishes, so that it is not scheduled again',
      'Remove removeOnComplete; delete the row from the file to remove its timer.',
    );
  }
  const reserved = RESERVED_META.find((name) => spec.meta?.[name] !== undefined);
  if (reserved) {
    throw refusals.invalid(
      `meta.${reserved}`,
      `meta.${reserved} is written by the schedules file follower`,
      `Rename meta.${reserved}.`,
    );
  }
  const meta: JsonObject = {
    ...spec.meta,
    sundialOwner: SCHEDULES_OWNER_MARKER,
    sundialRow: rowHash(normalized),
  };
  return { ...spec, removeOnComplete: false, meta };
}

/**
 * The hash of what a row means (`meta.sundialRow`): the row as `schedule` normalizes it, so that an edit
 * that changes nothing it means — a comment, fields reordered, `60m` for `1h`, or a field spelled out at
 * what the follower writes anyway or at its default — leaves the row as it is. Before, a row given
 * `removeOnComplete: false` (which every row is written with), `overlap: skip` (a waiting row's default)
 * or `meta: {}` was replaced: a new id, and a finished one-shot scheduled again. The hash counts
 * `removeOnComplete` as `true`, as it always did for a row that does not give it, so that rows written by an
 * earlier release keep their hash (an upgrade replaces none).
 */
function rowHash(normalized: NormalizedSpec): string {
  const { ifExists: _, ...written } = normalized;
  written.removeOnComplete = true;
  if (written.meta && Object.keys(written.meta).length === 0) delete written.meta;
  if (written.overlap === (written.awaitTask ? 'skip' : 'allow')) delete written.overlap;
  return createHash('sha256').update(stableJson(written)).digest('base64url').slice(0, 22);
}
