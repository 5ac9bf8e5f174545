import {
  describeFailure,
  failureStack,
  fromStart,
  gridSkips,
  isThenable,
  type JsonValue,
  refusals,
  type Skips,
  type Timer,
  type TimerContext,
  type TimerHandler,
  withTimeout,
} from '@sundial/core';
import { claimInstant, type ClaimResult } from '../store/claim-reply';
import { decodeRow, type RowFields } from '../store/row';
import { type ActiveRun, controllerOf } from './lease-keeper';
import type { RunOutcome } from './run-reports';

// Why a file of its own: the runner (timer-runner.ts) orchestrates claims, leases and completions; what
// turns one claimed row into a run and calls its handler needs none of that state, so it lives here.

export type Claimed = Extract<ClaimResult, { kind: 'claimed' }>;

/**
 * A claimed row as an active run. How it ends is its handler's outcome (invokeHandler), or, for a handler
 * still going when the run is handed back, null (untilEnded).
 */
export function startRun(partition: number, claimed: Claimed): ActiveRun {
  const { fields } = claimed;
  return {
    partition,
    id: fields.id,
    key: fields.key,
    version: Number(fields.rv),
    runCount: fields.rc === undefined ? 0 : Number(fields.rc),
    mode: claimed.mode,
    atMostOnce: fields.dl === 'm',
    released: false,
    started: false,
    letGo: undefined,
  };
}

/**
 * An asynchronous handler's outcome, or null once the run is handed back (`letGo`), whichever comes
 * first. One promise per such run, no race; a handler that returned at once needs none.
 */
export function untilEnded(run: ActiveRun, handled: Promise<RunOutcome>): Promise<RunOutcome | null> {
  return new Promise((resolve) => {
    run.letGo = lettingGo(resolve);
    void handled.then(resolve);
  });
}

/** A closure returned, not a literal assigned to a property (V8 pretenures those: § "ioredis closures"). */
function lettingGo(resolve: (outcome: null) => void): () => void {
  return () => resolve(null);
}

/**
 * The instant a run's lateness (`sundial_fire_lateness_seconds`, docs/spec.md §6.1) counts from: its due,
 * unless nobody could wait for that due — it had passed when it was asked for. A timer scheduled or
 * rescheduled for a past `at` counts from then (`sa`, its scheduledAt), and a backfill run, whose due
 * is a past slot it keeps for `ctx.due`, from when its slot was asked for (`ba`: the backfill call for
 * the first slot, the end of the run before it for the next ones); so does a slot overlap 'buffer-one'
 * kept, from the end of the run it came during (`cf`, which a retry has too, before its due). Counted from
 * such a due, each run would observe the due's age (seconds of overrun, days) and raise the lateness alert
 * on a healthy cluster.
 */
export function latenessFrom(claimed: Claimed): number {
  const { bf, sa, ba, cf } = claimed.fields;
  const asked = Number(bf === undefined ? sa : ba);
  const kept = Number(cf); // NaN without one
  const askedAt = kept > asked || !Number.isFinite(asked) ? kept : asked;
  return Number.isFinite(askedAt) ? Math.max(claimed.due, askedAt) : claimed.due;
}

/** A retry's try (`at`); a trigger run is always a first. */
export function attemptOf(claimed: Claimed): number {
  return claimed.fields.tg === undefined ? Number(claimed.fields.at ?? 1) : 1;
}

/** A successful run's outcome: the same object every time (nothing writes to it). */
const OK: RunOutcome = Object.freeze({ outcome: 'ok' });

/**
 * Calls the timer's handler, bounded by the row's timeout (`to`, docs/spec.md §3.2) when it has one; a
 * throw (or a handler this worker lacks) is the run's failure. A handler that returns no promise (or
 * thenable) has its outcome at once: no promise, no microtask turns.
 */
export function invokeHandler(
  handlers: Record<string, TimerHandler>,
  run: ActiveRun,
  claimed: Pick<Claimed, 'due' | 'leftMs' | 'fields'>,
  attempt: number,
): RunOutcome | Promise<RunOutcome> {
  const { fields } = claimed;
  run.started = true;
  // Own properties only: a handler named `toString` or `constructor` is a name, not Object.prototype's.
  const handler = Object.hasOwn(handlers, fields.h) ? handlers[fields.h] : undefined;
  try {
    if (!handler) throw refusals.unknownHandler(fields.h, 'worker', Object.keys(handlers));
    const context = new RunContext(run, claimed, attempt);
    const bounded =
      fields.to === undefined
        ? handler
        : withTimeout(handler, Number(fields.to), { name: fields.h, of: 'timer' });
    const result = bounded(context.payload, context);
    return isThenable(result) ? settled(result) : OK;
  } catch (error) {
    return failure(error);
  }
}

async function settled(result: PromiseLike<unknown>): Promise<RunOutcome> {
  try {
    await result;
    return OK;
  } catch (error) {
    return failure(error);
  }
}

function failure(error: unknown): RunOutcome {
  return { outcome: 'failed', error: describeFailure(error), stack: failureStack(error) };
}

/**
 * A handler's `ctx`. `signal` and `timer` are made when the handler first reads them: most handlers need
 * the payload alone, and an AbortController or a whole row decoded costs more than a short run's own
 * work. A class, as an object literal with getters costs ~1 µs to make (its accessors are defined one by
 * one), a class instance ~40 ns; the getters live on its prototype.
 */
class RunContext implements TimerContext {
  readonly id: string;
  readonly key: string;
  readonly version: number;
  readonly due: number;
  readonly claimedAt: number;
  readonly runCount: number;
  readonly payload: JsonValue;
  readonly #run: ActiveRun;
  readonly #fields: RowFields;
  #timer: Timer | undefined;

  constructor(
    run: ActiveRun,
    claimed: Pick<Claimed, 'due' | 'leftMs' | 'fields'>,
    readonly attempt: number,
  ) {
    const { fields } = claimed;
    this.due = claimed.due;
    this.claimedAt = claimInstant(claimed);
    this.id = run.id;
    this.key = run.key;
    this.version = run.version;
    this.runCount = run.runCount;
    this.payload = fields.p === undefined ? null : (JSON.parse(fields.p) as JsonValue);
    this.#run = run;
    this.#fields = fields;
  }

  get signal(): AbortSignal {
    return controllerOf(this.#run).signal;
  }

  get timer(): Timer {
    // the payload the handler got, not a second parse of it
    this.#timer ??= Object.assign(decodeRow(this.#fields), { payload: this.payload });
    return this.#timer;
  }
}

/** The grid slots a free tick went past, from the claimed row (its `d` is the next tick), as claim.lua counted them. */
export function freeRunSkips(claimed: Claimed): Skips {
  const { sa, em, d, ds, lf, st, cf } = claimed.fields;
  // `ds`: the next tick's slot when jitter moved its due (claim.lua counts up to the slot)
  // none before startAt (`st`): a run moved before it went past no slot (claim.lua grid_skips, §3.3c);
  // a run reschedule moved to a past due counts from the reschedule (`cf`, §3.4)
  const from = fromStart({ startAt: st === undefined ? undefined : Number(st) }, Number(cf ?? claimed.due));
  return gridSkips(Number(sa), Number(em), from, Number(lf), Number(ds ?? d));
}
