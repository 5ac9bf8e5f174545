/*
 * The in-memory engine on a virtual clock, for tests only (kept out of src so it never ships in dist/):
 * the engine's own specs and the memory backend of the conformance suite use it.
 */
import {
  type Clock,
  type ClockHandle,
  createEngine,
  type Engine,
  silentLogger,
  type SundialLogger,
  type EngineOptions,
  type JsonValue,
  type Timer,
  type TimerContext,
  type TimerEvent,
  type TimerEventName,
  type TimerHandler,
  VirtualClock,
  EVENT_NAMES,
} from '@sundial/core';

export const START = Date.parse('2026-03-01T00:00:00Z');

/** What a handler saw when it ran. */
export interface RunRecord {
  key: string;
  id: string;
  version: number;
  due: number;
  /** when the run started (claimed), by the backend's clock */
  at: number;
  runCount: number;
  /** ctx.attempt: 1, or the retry's try */
  attempt: number;
  signal: AbortSignal;
  /** the row after the claim (`ctx.timer`) */
  timer: Timer;
}

/** Payload knobs of the `work` handler: sleep `sleepMs` on the backend's clock, then throw if asked to. */
export interface WorkPayload {
  sleepMs?: number;
  fail?: string;
  reason?: string;
}

export interface Harness {
  clock: VirtualClock;
  engine: Engine;
  runs: RunRecord[];
  events: TimerEvent[];
  warnings: string[];
  errors: string[];
  eventsOf(type: TimerEventName): TimerEvent[];
  /** the engine's handlers (it looks one up at each run): a test may remove one after scheduling it */
  handlers: Record<string, TimerHandler>;
}

/**
 * An engine on a virtual clock (at START unless `start` says otherwise) with a `work` handler that
 * records every run. `source` lets a test put another time source in front of the virtual clock (e.g.
 * one that cannot cancel).
 */
export function harness(
  options: { source?: (clock: VirtualClock) => Clock; start?: number } & Partial<EngineOptions> = {},
): Harness {
  const { source, handlers, start = START, ...rest } = options;
  const clock = new VirtualClock(start);
  const runs: RunRecord[] = [];
  const events: TimerEvent[] = [];
  const warnings: string[] = [];
  const errors: string[] = [];
  const logger: SundialLogger = {
    ...silentLogger,
    warn: (message, fields) => warnings.push(`${message} ${JSON.stringify(fields)}`),
    error: (message, fields) => errors.push(`${message} ${JSON.stringify(fields)}`),
  };
  const sleep = (ms: number) => new Promise<void>((resolve) => clock.setTimeout(resolve, ms));
  const work = async (payload: JsonValue, ctx: TimerContext) => {
    const { key, id, version, due, runCount, attempt, signal, timer } = ctx;
    runs.push({ key, id, version, due, at: clock.now(), runCount, attempt, signal, timer });
    const knobs = (payload ?? {}) as WorkPayload;
    if (knobs.sleepMs) await sleep(knobs.sleepMs);
    if (knobs.fail) throw Object.assign(new Error(knobs.fail), knobs.reason ? { reason: knobs.reason } : {});
  };
  const all: Record<string, TimerHandler> = { work, ...handlers };
  const engine = createEngine({ logger, ...rest, clock: source ? source(clock) : clock, handlers: all });
  for (const type of EVENT_NAMES) engine.on(type, (event) => events.push(event));
  const eventsOf = (type: TimerEventName) => events.filter((event) => event.type === type);
  return { clock, engine, runs, events, warnings, errors, eventsOf, handlers: all };
}

/**
 * A time source that cannot cancel: every arming wakes, even after `clearTimeout` — the
 * injected-source contract of docs/spec.md §3.7, and the real clock's own race (a callback already queued
 * when `clearTimeout` runs). Optionally every wake comes twice.
 */
export function uncancellable(clock: VirtualClock, { twice = false } = {}): Clock {
  return {
    now: () => clock.now(),
    setTimeout(fn, ms) {
      clock.setTimeout(fn, ms);
      if (twice) clock.setTimeout(fn, ms);
      return {};
    },
    clearTimeout(_handle: ClockHandle) {
      // cannot: the wake still comes, and the version check must drop it
    },
  };
}

/** A small seeded generator (mulberry32), so a randomized test replays exactly from its seed. */
export function seededRandom(seed: number): (below: number) => number {
  let state = seed >>> 0;
  return (below) => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * below);
  };
}
