import type { Duration } from './duration';
import type { JsonCompatible, JsonInput, JsonInputObject, JsonObject, JsonValue } from './json-types';
import type { WriteOptions } from './write-options';
import type {
  DescribeOptions,
  HistoryOptions,
  LedgerEntry,
  NextOptions,
  NextTime,
  Preview,
  TimerDescription,
} from './ledger';

export type { JsonCompatible, JsonInput, JsonInputObject, JsonObject, JsonValue } from './json-types';
export type { WholeRequest, WriteOptions } from './write-options';

/** How a timer recurs. */
export type TimerKind = 'once' | 'interval' | 'cron';

export type TimerStatus = 'pending' | 'running' | 'paused' | 'completed' | 'failed' | 'cancelled';

export type Delivery = 'at-least-once' | 'at-most-once';

export type IfExists = 'error' | 'replace' | 'keep';

/**
 * What a periodic timer does with a slot that comes while a run of it is still going (docs/spec.md §3.3a):
 * skip it (counted), keep one to run right after, run it beside (`allow`), or abort the running one.
 */
export type OverlapPolicy = 'skip' | 'buffer-one' | 'allow' | 'cancel-other';

/** How a failed run is tried again (docs/spec.md §3.3b), as given: delays in ms or as durations. */
export interface RetrySpec {
  /** tries in all, the first one included: 3 = the run and up to 2 retries */
  attempts: number;
  backoff?: {
    type: 'fixed' | 'exponential';
    delay: number | Duration;
    maxDelay?: number | Duration;
  };
}

/** A RetrySpec with its defaults applied and its delays in ms (what `Timer.retry` returns). */
export interface RetryPolicy {
  attempts: number;
  backoff: { type: 'fixed' | 'exponential'; delay: number; maxDelay?: number };
}

/** What a periodic timer does about slots that passed while it could not run (docs/spec.md §3.3c). */
export type Catchup = 'skip' | 'once' | 'all';

/**
 * The slot policies of a periodic timer (docs/spec.md §3.3c), as stored and returned: durations and
 * instants in ms; each absent when not given (`catchup` absent = 'once').
 */
export interface SlotPolicy {
  catchup?: Catchup;
  catchupWindow?: number;
  jitter?: number;
  startAt?: number;
  endAt?: number;
}

/** The record of the most recent run (docs/spec.md §2). */
export interface LastRun {
  started: number;
  ended?: number;
  status: 'running' | 'ok' | 'failed';
  error?: { message: string; reason?: string };
}

/** A timer as stored and returned (docs/spec.md §2). */
export interface Timer extends SlotPolicy {
  id: string;
  key: string;
  version: number;
  kind: TimerKind;
  status: TimerStatus;
  handler: string;
  payload: JsonValue;
  scheduledAt: number;
  dueAt: number;
  delayMs?: number;
  everyMs?: number;
  cron?: string;
  tz?: string;
  maxRuns?: number;
  runCount: number;
  awaitTask: boolean;
  removeOnComplete: boolean;
  delivery: Delivery;
  lastFiredAt: number | null;
  lastCompletedAt: number | null;
  lastErrorAt: number | null;
  last: LastRun | null;
  meta?: JsonObject;
  /** periodic timers whose policy is not the default 'skip' */
  overlap?: OverlapPolicy;
  retry?: RetryPolicy;
  pauseAfterFailures?: number;
  /** how long one run may take, in ms, when given (docs/spec.md §3.2) */
  timeout?: number;
}

/**
 * What a caller asks for (docs/spec.md §2, "Input"). Exactly one of delay, at, every, cron. `P`, the
 * payload's type, is inferred by `schedule`, `scheduleMany` and `preview`, which check it is JSON
 * (`JsonCompatible`): an `interface` type compiles there; a spec declared apart names it,
 * `TimerSpec<Reminder>`.
 */
export interface TimerSpec<P = JsonInput> {
  key: string;
  handler: string;
  payload?: P;
  delay?: number | Duration;
  at?: number | string;
  every?: number | Duration;
  cron?: string;
  tz?: string;
  maxRuns?: number;
  awaitTask?: boolean;
  removeOnComplete?: boolean;
  meta?: JsonInputObject;
  ifExists?: IfExists;
  delivery?: Delivery;
  /** cron and interval (default 'skip'; an interval with awaitTask false is 'allow') */
  overlap?: OverlapPolicy;
  /** default: a failed run is not tried again */
  retry?: RetrySpec;
  /** pause a periodic timer after this many failed slots in a row (default: never) */
  pauseAfterFailures?: number;
  /** how long one run may take: past it the run's signal aborts and it fails, reason 'timeout' (default: no bound) */
  timeout?: number | Duration;
  /** periodic only (docs/spec.md §3.3c) */
  catchup?: Catchup;
  catchupWindow?: number | Duration;
  jitter?: number | Duration;
  startAt?: number | string;
  endAt?: number | string;
}

/**
 * A spec whose payload, of type `P`, is JSON (`JsonCompatible`): what `schedule`, `scheduleMany` and
 * `preview` take, inferring `P` from the payload given (`JsonInput` without one).
 */
export type CheckedSpec<P> = TimerSpec<P> & { payload?: JsonCompatible<P> };

/** `reschedule(key, when)`: a new relative or absolute due time. */
export type RescheduleWhen = { delay: number | Duration } | { at: number | string };

/**
 * A validated spec with every default applied and the schedule reduced to one form.
 * `dueAt` is not here: it depends on "now", see `firstDue` in ./schedule.
 */
export interface NormalizedSpec extends SlotPolicy {
  key: string;
  handler: string;
  payload: JsonValue;
  kind: TimerKind;
  /** once: the relative delay in ms (when given as `delay`) */
  delayMs?: number;
  /** once: the absolute due time in epoch ms (when given as `at`) */
  atMs?: number;
  everyMs?: number;
  cron?: string;
  tz?: string;
  maxRuns?: number;
  awaitTask: boolean;
  removeOnComplete: boolean;
  meta?: JsonObject;
  ifExists: IfExists;
  delivery: Delivery;
  /** periodic timers only */
  overlap?: OverlapPolicy;
  retry?: RetryPolicy;
  pauseAfterFailures?: number;
  /** ms, when given */
  timeout?: number;
}

/** What a handler receives besides its payload (docs/spec.md §3.2). */
export interface TimerContext<P = JsonValue> {
  id: string;
  key: string;
  version: number;
  /**
   * the time this run was due (epoch ms, Redis's clock on the Redis backend): `Date.now()` minus it is how
   * late the run is only on a host whose clock is right (the worker's `sundial_fire_lateness_seconds` is
   * on the cluster clock, docs/spec.md §4.4)
   */
  due: number;
  /**
   * when the run was claimed (epoch ms, the cluster clock): up to the worker's `claimAheadMs` before `due`
   * on Redis (docs/spec.md §3.2), the run's start in the in-memory engine. A cancel that came after it met
   * this run running (its `signal` aborts), not a pending timer.
   */
  claimedAt: number;
  runCount: number;
  /** 1 for a slot's first run, 2 for its first retry, ... (`retry`, docs/spec.md §3.3b) */
  attempt: number;
  payload: P;
  /** aborted when the timer is cancelled, replaced, rescheduled or its engine or client disposed */
  signal: AbortSignal;
  /**
   * The timer as its row stood at the claim. On the Redis backend `signal` and `timer` are getters made on
   * first read (docs/design.md "The fire path"), so `{ ...ctx }` copies neither: read them from `ctx`.
   */
  timer: Timer;
}

export type TimerHandler<P = JsonValue> = (payload: P, ctx: TimerContext<P>) => unknown;

export type TimerEventName =
  | 'scheduled'
  | 'running'
  | 'completed'
  | 'failed'
  | 'requeued'
  | 'cancelled'
  | 'stale'
  | 'skipped'
  | 'paused'
  | 'reset'
  | 'disposed';

/** Every event carries the timer's identity and the time it happened (docs/spec.md §3.6). */
export interface TimerEvent {
  type: TimerEventName;
  id: string;
  key: string;
  version: number;
  kind: TimerKind | null;
  at: number;
  /**
   * cancelled: 'cancelled' | 'replaced' | 'reset' | 'disposed'; stale / skipped: why; completed /
   * failed: why the run ended its timer unasked (TimerEnd: 'no-next-slot', 'ended', 'max-runs'), absent
   * when it did not; scheduled: 'reschedule' | 'resume' | 'trigger' | 'backfill'; paused: 'failures'
   */
  reason?: string;
  error?: { message: string; reason?: string };
  due?: number;
  count?: number;
  /** failed: which try of its slot the run was (1 = the first) */
  attempt?: number;
  /** requeued (Redis only): the worker whose lease on the run ran out */
  workerId?: string;
}

/**
 * Why a run ended its timer unasked (docs/spec.md §3.6, §3.9): no slot comes after it (`no-next-slot`,
 * a cron), its next slot would come after endAt (`ended`), or it was the last run maxRuns allows
 * (`max-runs`, which wins when another applies too). A one-shot's run and an awaiting interval's failure
 * (not at maxRuns) end a timer by its kind: they carry none.
 */
export type TimerEnd = 'no-next-slot' | 'ended' | 'max-runs';

export type TimerListener = (event: TimerEvent) => void;

export interface ListOptions {
  prefix?: string;
  status?: TimerStatus;
  limit?: number;
  cursor?: string;
  /**
   * Epoch ms: list only the pending timers due at or before it, in due order (then key order) — what
   * fires next, e.g. the operator UI's timeline. `status` may then only be `pending`.
   */
  dueBefore?: number;
}

export interface ListResult {
  items: Timer[];
  nextCursor: string | null;
}

/** `backfill(key, range)`: past instants (epoch ms or ISO-8601 with offset), `from` ≤ `to` ≤ now. */
export interface BackfillRange {
  from: number | string;
  to: number | string;
}

export interface BackfillResult {
  /** how many slots will run */
  slots: number;
}

/** The operations every backend offers: the in-memory engine, the Redis client, the HTTP API. */
export interface TimersApi {
  /** `P`, the payload's type, must be JSON (`JsonCompatible`): an interface compiles, a Date or a function does not. */
  schedule<P = JsonInput>(spec: CheckedSpec<P>, options?: WriteOptions): Promise<Timer>;
  /** A batch of JSON payloads of different shapes (`{ id: 1 }` beside `'b'`), or of one type `P` (an interface). */
  scheduleMany(specs: TimerSpec[], options?: WriteOptions): Promise<Timer[]>;
  scheduleMany<P>(specs: CheckedSpec<P>[], options?: WriteOptions): Promise<Timer[]>;
  cancel(key: string, options?: WriteOptions): Promise<boolean>;
  cancelAll(scope?: string, options?: WriteOptions): Promise<number>;
  reschedule(key: string, when: RescheduleWhen, options?: WriteOptions): Promise<Timer>;
  pause(key: string, options?: WriteOptions): Promise<Timer>;
  resume(key: string, options?: WriteOptions): Promise<Timer>;
  trigger(key: string, options?: WriteOptions): Promise<Timer>;
  /** Runs the periodic timer's slots in [from, to] now, in order, each with its own due (docs/spec.md §3.3c). */
  backfill(key: string, range: BackfillRange, options?: WriteOptions): Promise<BackfillResult>;
  get(key: string): Promise<Timer | null>;
  list(options?: ListOptions): Promise<ListResult>;
  check(id: string): Promise<boolean>;
  snapshot(): Promise<string[]>;
  /** The timer's ledger, newest first (docs/spec.md §3.9); `not-found` when the key has none and no row. */
  history(key: string, options?: HistoryOptions): Promise<LedgerEntry[]>;
  /** The live timer's next due times with its zone's offset at each; `not-found` without a live row. */
  next(key: string, options?: NextOptions): Promise<NextTime[]>;
  /** Validates a spec and shows its first due times; writes nothing (refused like `schedule`). */
  preview<P = JsonInput>(spec: CheckedSpec<P>, options?: NextOptions): Promise<Preview>;
  /** The row, its next times, its ledger and its counters; `not-found` without a row. */
  describe(key: string, options?: DescribeOptions): Promise<TimerDescription>;
  on(event: TimerEventName, listener: TimerListener): () => void;
  dispose(): Promise<void>;
}

/**
 * What a cancel of one key did (docs/spec.md §3.4): `cancelled` a live timer; `completed` or `failed`:
 * removed the row of a timer that ended so, kept by `removeOnComplete: false` (`cancel` answers `false`
 * for it); `null`: there was no row under the key.
 */
export type CancelOutcome = 'cancelled' | 'completed' | 'failed' | null;

/** `DELETE /v1/timers/:key`'s answer (docs/spec.md §5.2): a live timer cancelled, or a kept ended row removed. */
export type CancelAnswer =
  { cancelled: true } | { cancelled: false; removed: Exclude<CancelOutcome, 'cancelled' | null> };

/**
 * A backend (the in-memory engine, RedisTimers): the Timers API, and `cancelOutcome`, the same write as
 * `cancel` (one request id answers either) told three ways, which `DELETE /v1/timers/:key` answers.
 */
export interface TimersBackend extends TimersApi {
  cancelOutcome(key: string, options?: WriteOptions): Promise<CancelOutcome>;
}
