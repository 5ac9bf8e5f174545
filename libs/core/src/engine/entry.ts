import type { ClockHandle } from '../clock';
import { hasSlotPolicy } from '../slot-policy';
import type { NormalizedSpec, SlotPolicy, Timer, TimerKind, TimerStatus } from '../types';

/** One execution of a timer's handler, and the identity its completion is checked against. */
export interface Run {
  readonly id: string;
  readonly key: string;
  readonly kind: TimerKind;
  /** the version this run claimed */
  readonly version: number;
  readonly due: number;
  readonly started: number;
  /** started by `trigger`: it never moves the schedule */
  readonly triggered: boolean;
  /** which try of its slot this run is (`retry`): 1 for the first */
  readonly attempt: number;
  /**
   * slots up to here were already counted: skips count after it. The run's slot (its due without jitter),
   * or after the run before it for a retry's or a buffered slot's run
   */
  readonly countFrom: number;
  /**
   * a tick of an `awaitTask: false` interval: the next tick was armed at claim, the run holds nothing
   * (the timer stays `pending`) and its completion records the outcome without touching the schedule
   */
  readonly free: boolean;
  readonly controller: AbortController;
  /** aborted by the next slot's run (overlap 'cancel-other'): its completion is stale, reason 'overlap' */
  overlapped?: boolean;
}

/** A live timer: the stored fields plus the engine's bookkeeping. `status` is derived, see `statusOf`. */
export interface Entry extends Omit<Timer, 'status'> {
  paused: boolean;
  /** set when the timer has finished (kept only with removeOnComplete: false) */
  outcome: 'completed' | 'failed' | null;
  /** the armed wake for `version`, or null once it was consumed or withdrawn */
  wake: ClockHandle | null;
  /** runs in flight: at most one that holds the timer, and any number of free ones */
  readonly runs: Set<Run>;
  /** the most recently started run, the one `last` describes */
  latestRun: Run | null;
  /** the try the armed wake makes of its slot (1, or more when it is a retry) */
  attempt: number;
  /** the armed wake's skips count after this (see Run.countFrom); null: after its due */
  countFrom: number | null;
  /** failed slots in a row (pauseAfterFailures) */
  failures: number;
  /** the slot `dueAt` stands for: `dueAt` without its jitter (docs/spec.md §3.3c) */
  slot: number;
  /** a backfill in progress: the slots still to run after the armed one, then what it goes back to */
  backfill: Backfill | null;
  /** the armed due is a run the caller moved there (`reschedule`): no slot, so never passed as late */
  moved: boolean;
}

/**
 * A backfill in progress (docs/spec.md §3.3c): its slots run as first tries, each counted from itself; then
 * the schedule goes on where it was — the armed slot (`resume`), or a due that is no slot's, run however
 * late (`moved`: the run `reschedule` moved, or a pending retry, at `resume`) — with the armed wake's try
 * and skip start (`attempt`, `countFrom`) as they were.
 */
export interface Backfill {
  rest: number[];
  resume: number;
  moved: boolean;
  attempt: number;
  countFrom: number | null;
}

/**
 * Sets `entry` on its backfill: what the schedule goes back to kept in the record (the armed slot, or a due
 * that is no slot's — a moved run or a pending retry — with its try and skip start), the backfill's slots
 * then run as first tries.
 */
export function startBackfill(entry: Entry, rest: number[]): void {
  const { attempt, countFrom } = entry;
  const moved = entry.moved || attempt > 1;
  entry.backfill = { rest, resume: moved ? entry.dueAt : entry.slot, moved, attempt, countFrom };
  [entry.attempt, entry.countFrom, entry.moved] = [1, null, false];
}

/** A fresh entry at version 0; arming it makes it version 1. */
export function createEntry(id: string, spec: NormalizedSpec, now: number): Entry {
  return {
    id,
    key: spec.key,
    version: 0,
    kind: spec.kind,
    handler: spec.handler,
    payload: structuredClone(spec.payload),
    scheduledAt: now,
    dueAt: now,
    delayMs: spec.delayMs,
    everyMs: spec.everyMs,
    cron: spec.cron,
    tz: spec.tz,
    maxRuns: spec.maxRuns,
    runCount: 0,
    awaitTask: spec.awaitTask,
    removeOnComplete: spec.removeOnComplete,
    delivery: spec.delivery,
    lastFiredAt: null,
    lastCompletedAt: null,
    lastErrorAt: null,
    last: null,
    meta: spec.meta === undefined ? undefined : structuredClone(spec.meta),
    overlap: spec.overlap,
    retry: spec.retry && structuredClone(spec.retry),
    pauseAfterFailures: spec.pauseAfterFailures,
    timeout: spec.timeout,
    catchup: spec.catchup,
    catchupWindow: spec.catchupWindow,
    jitter: spec.jitter,
    startAt: spec.startAt,
    endAt: spec.endAt,
    slot: now,
    backfill: null,
    moved: false,
    paused: false,
    outcome: null,
    wake: null,
    runs: new Set(),
    latestRun: null,
    attempt: 1,
    countFrom: null,
    failures: 0,
  };
}

/**
 * Whether the armed wake runs a slot that a slot policy may pass as late (docs/spec.md §3.3c): a slot's
 * first try. A retry runs its slot again (let through already); a backfill slot, a moved run and the slot
 * overlap 'buffer-one' kept (its countFrom set) are asked for.
 */
export function slotToJudge(entry: Entry): boolean {
  return (
    entry.kind !== 'once' &&
    entry.backfill === null &&
    entry.attempt === 1 &&
    entry.countFrom === null &&
    !entry.moved &&
    hasSlotPolicy(entry)
  );
}

/** The run that holds the timer (status `running`), if any. */
export function heldRun(entry: Entry): Run | undefined {
  return [...entry.runs].find((run) => !run.free);
}

export function statusOf(entry: Entry): TimerStatus {
  if (entry.outcome) return entry.outcome;
  if (entry.paused) return 'paused';
  return heldRun(entry) ? 'running' : 'pending';
}

/** A copy the caller may keep or change without touching the engine's entry. */
export function toTimer(entry: Entry, status: TimerStatus = statusOf(entry)): Timer {
  return {
    id: entry.id,
    key: entry.key,
    version: entry.version,
    kind: entry.kind,
    status,
    handler: entry.handler,
    payload: structuredClone(entry.payload),
    scheduledAt: entry.scheduledAt,
    dueAt: entry.dueAt,
    delayMs: entry.delayMs,
    everyMs: entry.everyMs,
    cron: entry.cron,
    tz: entry.tz,
    maxRuns: entry.maxRuns,
    runCount: entry.runCount,
    awaitTask: entry.awaitTask,
    removeOnComplete: entry.removeOnComplete,
    delivery: entry.delivery,
    lastFiredAt: entry.lastFiredAt,
    lastCompletedAt: entry.lastCompletedAt,
    lastErrorAt: entry.lastErrorAt,
    last: entry.last && structuredClone(entry.last),
    meta: entry.meta && structuredClone(entry.meta),
    ...overlapOf(entry),
    ...(entry.retry && { retry: structuredClone(entry.retry) }),
    ...(entry.pauseAfterFailures !== undefined && { pauseAfterFailures: entry.pauseAfterFailures }),
    ...(entry.timeout !== undefined && { timeout: entry.timeout }),
    ...slotPolicyOf(entry),
  };
}

/** The slot policies the timer has, each only when given (a Timer lists no absent policy). */
function slotPolicyOf({ catchup, catchupWindow, jitter, startAt, endAt }: SlotPolicy): SlotPolicy {
  return {
    ...(catchup !== undefined && { catchup }),
    ...(catchupWindow !== undefined && { catchupWindow }),
    ...(jitter !== undefined && { jitter }),
    ...(startAt !== undefined && { startAt }),
    ...(endAt !== undefined && { endAt }),
  };
}

/** `Timer.overlap`: a periodic timer's policy when it is not the default 'skip' (awaitTask false is 'allow'). */
function overlapOf(entry: Entry): Pick<Timer, 'overlap'> {
  if (entry.kind === 'once') return {};
  const overlap = entry.overlap ?? (entry.awaitTask ? 'skip' : 'allow');
  return overlap === 'skip' ? {} : { overlap };
}
