import {
  describeFailure,
  gridSkips,
  type JsonValue,
  refusals,
  type Skips,
  type Timer,
  type TimerHandler,
} from '@sundial/core';
import type { ClaimResult } from '../store/fire-commands';
import { decodeRow } from '../store/row';
import { type ActiveRun, controllerOf } from './lease-keeper';
import type { RunOutcome } from './run-reports';

// Why a file of its own: the runner (timer-runner.ts) orchestrates claims, leases and completions; what
// turns one claimed row into a run and calls its handler needs none of that state, so it lives here.

export type Claimed = Extract<ClaimResult, { kind: 'claimed' }>;

/** A claimed row as an active run, with the promise that settles (null) when the run is handed back. */
export function startRun(
  partition: number,
  claimed: Claimed,
): { run: ActiveRun; timer: Timer; handedBack: Promise<null> } {
  const timer = decodeRow(claimed.fields);
  let letGo!: () => void;
  const handedBack = new Promise<null>((resolve) => (letGo = () => resolve(null)));
  const run: ActiveRun = {
    partition,
    id: timer.id,
    key: timer.key,
    version: Number(claimed.fields.rv),
    runCount: timer.runCount,
    mode: claimed.mode,
    released: false,
    letGo,
  };
  return { run, timer, handedBack };
}

/** A retry's try (`at`); a trigger run is always a first. */
export function attemptOf(claimed: Claimed): number {
  return claimed.fields.tg === undefined ? Number(claimed.fields.at ?? 1) : 1;
}

/** Calls the timer's handler; a throw (or a handler this worker lacks) is the run's failure. */
export async function invokeHandler(
  handlers: Record<string, TimerHandler>,
  run: ActiveRun,
  due: number,
  timer: Timer,
  attempt: number,
): Promise<RunOutcome> {
  const handler = handlers[timer.handler];
  try {
    if (!handler) throw refusals.unknownHandler(timer.handler, 'worker');
    const { id, key, version, runCount } = run;
    const payload: JsonValue = timer.payload;
    await handler(payload, {
      id,
      key,
      version,
      due,
      runCount,
      attempt,
      payload,
      get signal() {
        return controllerOf(run).signal;
      },
      timer,
    });
    return { outcome: 'ok' };
  } catch (error) {
    return { outcome: 'failed', error: describeFailure(error) };
  }
}

/** The grid slots a free tick went past, from the claimed row (its `d` is the next tick), as claim.lua counted them. */
export function freeRunSkips(claimed: Claimed): Skips {
  const { sa, em, d, ds, lf } = claimed.fields;
  // `ds`: the next tick's slot when jitter moved its due (claim.lua counts up to the slot)
  return gridSkips(Number(sa), Number(em), claimed.due, Number(lf), Number(ds ?? d));
}
