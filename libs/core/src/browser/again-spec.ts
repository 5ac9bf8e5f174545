// libs/core/src/browser: modules with no imports, which the operator UI's own build also compiles and
// the browser loads beside the UI's modules (apps/scheduler/ui/tsconfig.json `rootDirs`): what a kept
// timer that ended is scheduled again with is read from its row here once, for a one-shot and for an
// interval or cron alike, and checked against `schedule`'s own validation (again-spec.spec.ts).

/** The fields of a row this module reads: the API's Timer and the operator UI's own type both have them. */
export interface AgainRow {
  key: string;
  kind: 'once' | 'interval' | 'cron';
  status: string;
  handler: string;
  payload: unknown;
  everyMs?: number;
  cron?: string;
  tz?: string;
  maxRuns?: number;
  runCount: number;
  removeOnComplete?: boolean;
  meta?: unknown;
  delivery: string;
  overlap?: string;
  retry?: unknown;
  pauseAfterFailures?: number;
  timeout?: number;
  catchup?: string;
  catchupWindow?: number;
  jitter?: number;
  startAt?: number;
  endAt?: number;
}

/**
 * What an ended timer's page offers: `run` (Run again: a kept one-shot that ended, due now), `schedule`
 * (Schedule again: a kept interval or cron that ended, on its schedule from now), `owned` (a declarative
 * source's row, `meta.sundialOwner`: its owner writes it again, and the API refuses the mark anyway), or
 * `none` (a live timer, or a cancelled one).
 */
export type AgainWay = 'run' | 'schedule' | 'owned' | 'none';

export function againWay(row: AgainRow): AgainWay {
  if (row.status !== 'completed' && row.status !== 'failed') return 'none';
  if (ownerOf(row) !== undefined) return 'owned';
  return row.kind === 'once' ? 'run' : 'schedule';
}

/** The row's `meta.sundialOwner` (`'schedules-file'`, `'distributed-cron'`, …) and `meta.sundialApp`, if any. */
export function ownerOf(row: Pick<AgainRow, 'meta'>): { owner: string; app?: string } | undefined {
  const meta = row.meta;
  if (typeof meta !== 'object' || meta === null || !Object.hasOwn(meta, 'sundialOwner')) return undefined;
  const { sundialOwner, sundialApp } = meta as Record<string, unknown>;
  return {
    owner: String(sundialOwner),
    ...(typeof sundialApp === 'string' && { app: sundialApp }),
  };
}

/**
 * Who writes an owned row again, by its `meta.sundialOwner` (docs/spec.md §5.1, §5.4): the operator UI's
 * note and `sundial again`'s refusal name it so.
 */
export function ownerWords(owner: string, app: string | undefined): string {
  const of = app === undefined ? '' : ` of the app “${app}”`;
  switch (owner) {
    case 'schedules-file':
      return 'the schedules file, which writes it again when its row in the file changes';
    case 'distributed-cron':
    case 'distributed-interval': {
      const decorator = owner === 'distributed-cron' ? '@DistributedCron' : '@DistributedInterval';
      return `${decorator}${of}, which writes it again when the app starts with its declaration changed`;
    }
    default:
      return `its owner “${owner}”${of}, which writes it again`;
  }
}

/** The TimerSpec that schedules the row again, and what of the row it leaves out (for the question). */
export interface AgainSpec {
  spec: Record<string, unknown>;
  /**
   * The row's `endAt`, left out because the API would refuse the spec with it (an end before the first
   * slot): `passed` by now, or before the new timer's first slot (`no-slot`: a timer ends once no slot is
   * left before its endAt, up to a period before it).
   */
  endAtLeftOut?: { at: number; why: 'passed' | 'no-slot' };
}

/** Fields sent as the row holds them, when it has them: the options of every kind. */
const OPTIONS = ['removeOnComplete', 'meta', 'retry', 'timeout'] as const;
/**
 * And those of an interval or cron. `awaitTask` is not among them: a row whose runs are not awaited says
 * so by its `overlap` ('allow', or 'cancel-other'), which sets it, and the API refuses it on a cron.
 */
const PERIODIC_OPTIONS = [
  'maxRuns',
  'overlap',
  'pauseAfterFailures',
  'catchup',
  'catchupWindow',
  'jitter',
  'startAt',
] as const;

/**
 * The spec that schedules `row` again under its key with its own handler, payload and options, none
 * added: a one-shot due now (`delay: 0`); an interval or cron on its schedule (`every` in ms, or `cron`
 * and `tz`) with every policy the row carries. `maxRuns` counts afresh on the new timer. An `endAt` the
 * API would refuse is left out (`endAtLeftOut`): one not after `now`, or before `firstSlotAt` — the new
 * timer's first slot, which the caller asks the scheduler's preview of `firstSlotProbe(row, now)` for.
 */
export function againSpec(row: AgainRow, now: number, firstSlotAt?: number): AgainSpec {
  const spec = specWithoutEnd(row);
  if (row.kind === 'once' || row.endAt === undefined) return { spec };
  if (row.endAt <= now) return { spec, endAtLeftOut: { at: row.endAt, why: 'passed' } };
  if (firstSlotAt !== undefined && row.endAt < firstSlotAt) {
    return { spec, endAtLeftOut: { at: row.endAt, why: 'no-slot' } };
  }
  spec.endAt = row.endAt;
  return { spec };
}

/**
 * The spec whose first slot (`POST /v1/preview?count=1`, the scheduler's clock and zone rules) tells
 * whether the row's endAt is kept: the spec without its endAt, for an interval or cron whose endAt has not
 * passed; undefined when there is nothing to ask.
 */
export function firstSlotProbe(row: AgainRow, now: number): Record<string, unknown> | undefined {
  if (row.kind === 'once' || row.endAt === undefined || row.endAt <= now) return undefined;
  return specWithoutEnd(row);
}

function specWithoutEnd(row: AgainRow): Record<string, unknown> {
  const spec: Record<string, unknown> = {
    key: row.key,
    handler: row.handler,
    payload: row.payload,
    delivery: row.delivery,
  };
  if (row.kind === 'once') spec.delay = 0;
  else if (row.kind === 'interval') spec.every = row.everyMs;
  else Object.assign(spec, { cron: row.cron, tz: row.tz });
  const fields = row.kind === 'once' ? OPTIONS : [...OPTIONS, ...PERIODIC_OPTIONS];
  for (const field of fields) if (row[field] !== undefined) spec[field] = row[field];
  return spec;
}

/**
 * The sentence that says an endAt was left out, and why (the CLI's stderr line after the key, lower case;
 * the UI's question, a sentence of its own).
 */
export function endAtLeftOutText(left: NonNullable<AgainSpec['endAtLeftOut']>, at: string): string {
  const why =
    left.why === 'passed'
      ? 'has passed'
      : "comes before the new timer's first slot (no slot is left before it)";
  return `its endAt, ${at}, ${why}: it is left out, so the new timer has no end.`;
}
