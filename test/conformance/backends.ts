/**
 * The backends the conformance suite runs on, behind one harness: the in-memory engine on a virtual
 * clock, and RedisTimers with a real Dispatcher and TimerRunner on a private redis-server. Cases use
 * only `TimersBackend` and this harness, so the same file checks both the same way.
 *
 * Time is backend-neutral: `pass(ms)` lets that much time go by (the virtual clock advances; on Redis
 * real time passes), and `until(probe)` lets time pass until an outcome shows, with a deadline — cases
 * assert outcomes, never timings, since Redis runs in real time on a loaded machine.
 */
import {
  type Clock,
  EVENT_NAMES,
  silentLogger,
  type JsonValue,
  type TimerContext,
  type TimerEvent,
  type TimerEventName,
  type TimerHandler,
  type TimersBackend,
  type VirtualClock,
} from '@sundial/core';
import { Dispatcher, RedisTimers, TimerRunner } from '@sundial/redis';
import Redis from 'ioredis';
import { harness as engineHarness, type RunRecord, START, type WorkPayload } from '../engine/harness';
import { type RedisServer, redisNow, startRedis } from '@sundial/testing/harness';
import { backdateRows } from './backdate-rows';
import { cancelAllRecordsMode } from './cancel-all-records-mode';

export type BackendName = 'memory' | 'redis';

/**
 * Which backends this jest project runs (see jest.config.js: the unit project runs `memory`, the
 * conformance project `redis`); both when unset, e.g. under a plain `npx jest test/conformance`.
 */
export const BACKENDS: BackendName[] = (
  ((globalThis as { SUNDIAL_BACKENDS?: string }).SUNDIAL_BACKENDS ?? 'memory,redis').split(
    ',',
  ) as BackendName[]
).filter((name) => name === 'memory' || name === 'redis');

export interface Harness {
  backend: BackendName;
  timers: TimersBackend;
  /** every run of the `work` handler, in start order */
  runs: RunRecord[];
  /** every event the timers delivered to their listeners, in order */
  events: TimerEvent[];
  eventsOf(type: TimerEventName): TimerEvent[];
  /** the backend's clock (ms) */
  now(): Promise<number>;
  /** lets `ms` of time go by */
  pass(ms: number): Promise<void>;
  /** lets time go by until `probe` returns something other than undefined/false; fails after `within` ms */
  until<T>(
    probe: () => T | undefined | false | Promise<T | undefined | false>,
    options?: UntilOptions,
  ): Promise<T>;
  /** the first event matching `expected`, once it has come */
  event(expected: Partial<TimerEvent>, options?: UntilOptions): Promise<TimerEvent>;
  /**
   * Every event of `type` so far, once at least `count` have come. On Redis events cross pub/sub on a
   * connection of their own: a state read back (a row gone, a run recorded) can come before the events of
   * the same change, so a case waits for the events it checks, then checks all of them.
   */
  eventsOnceCome(type: TimerEventName, count: number, options?: UntilOptions): Promise<TimerEvent[]>;
  /**
   * The first run matching `expected`, once its handler has started. On Redis the `running` event is
   * published by the claim, and the runner starts the handler only once the claim's answer has come: a
   * case that reads a run waits for the run, not for its event.
   */
  started(
    expected: Partial<Pick<RunRecord, 'key' | 'id' | 'version'>>,
    options?: UntilOptions,
  ): Promise<RunRecord>;
  /**
   * The backend is down for `ms` right after timers were scheduled, then comes back: nothing runs while
   * it is down. Memory: the virtual clock moves `ms` with every wake held, then they come. Redis (real
   * time cannot jump): every row of this harness is put back as if scheduled `ms` earlier (its grid, its
   * first slot and jitter recomputed, startAt and endAt moved with it: each as far from now as on the
   * virtual clock) with nothing run since, which is what Redis holds after a real outage.
   */
  downFor(ms: number): Promise<void>;
  /** Drops handler `name` from the backend's handlers (looked up at each run, so later runs lack it). */
  removeHandler(name: string): void;
  /**
   * Makes the calls of `calls` with nothing due handed to a worker meanwhile, so a run due at once (a
   * reschedule to a past `at`, a retry's short backoff, a kept slot) waits for the next call; runs going
   * on go on. Memory: the engine's wakes wait (as downFor's). Redis: its dispatcher is stopped, then a new
   * one starts.
   */
  held<T>(calls: () => Promise<T>): Promise<T>;
  /**
   * Closes what this harness opened (on Redis its dispatcher and runner too) before the test ends, as
   * the hooks would after it: a case opening one harness after another (the model's sequences) would
   * otherwise keep every earlier one's dispatcher and runner polling Redis until its end.
   */
  close(): Promise<void>;
}

export interface UntilOptions {
  /** the deadline, in ms of backend time (virtual on the engine, real on Redis); default 5 s */
  within?: number;
  what?: string;
}

export interface OpenOptions {
  /** more handlers besides `work` */
  handlers?: Record<string, TimerHandler>;
  /** how long a cancelled key answers `ifExists: 'keep'` with its cancelled timer */
  tombstoneMs?: number;
  /** entries kept per key (the `ledger` option of every process; default 50) */
  ledger?: number;
}

export interface Backend {
  name: BackendName;
  open(options?: OpenOptions): Promise<Harness>;
}

const DEFAULT_WITHIN_MS = 5_000;
/** How far the virtual clock moves between two probes of `until`. */
const VIRTUAL_STEP_MS = 5;
/** How often `until` probes in real time. */
const REAL_STEP_MS = 10;

/**
 * Registers the suite hooks a backend needs (Redis: a private server for the describe block, each
 * test on a fresh prefix; everything a test opened is closed after it) and returns its factory.
 * Jest runs no afterEach for an `it.concurrent` test: what those opened is closed after the block.
 */
export function useBackend(name: BackendName): Backend {
  return name === 'memory' ? memoryBackend() : redisBackend();
}

function memoryBackend(): Backend {
  const opened: TimersBackend[] = [];
  const disposeOpened = async () => {
    for (const timers of opened.splice(0)) await timers.dispose();
  };
  afterEach(disposeOpened);
  afterAll(disposeOpened);
  return {
    name: 'memory',
    async open(options = {}) {
      const runs: RunRecord[] = [];
      const work = workHandler(runs, (ms, signal) => sleepOn(h.clock, ms, signal));
      let held: (() => void)[] | null = null;
      const source = (clock: VirtualClock): Clock => ({
        now: () => clock.now(),
        setTimeout: (fn, ms) => clock.setTimeout(() => (held ? held.push(fn) : fn()), ms),
        clearTimeout: (handle) => clock.clearTimeout(handle),
      });
      const h = engineHarness({ ...options, handlers: { work, ...options.handlers }, source });
      // the engine's wakes in `calls` wait for its end (the runs going on, on the clock itself, go on)
      const holding = async <T>(calls: () => Promise<T>) => {
        const wakes: (() => void)[] = [];
        held = wakes;
        try {
          return await calls();
        } finally {
          held = null;
          for (const wake of wakes) wake();
          await h.clock.advance(0);
        }
      };
      opened.push(h.engine);
      const now = async () => h.clock.now();
      const until: Harness['until'] = async (
        probe,
        { within = DEFAULT_WITHIN_MS, what = 'condition' } = {},
      ) => {
        const deadline = h.clock.now() + within;
        for (;;) {
          const value = await probe();
          if (value !== undefined && value !== false) return value;
          if (h.clock.now() >= deadline)
            throw new Error(`memory: ${what} did not happen within ${within} ms`);
          await h.clock.advance(Math.min(VIRTUAL_STEP_MS, deadline - h.clock.now()));
        }
      };
      return withEvents({
        backend: 'memory',
        timers: h.engine,
        runs,
        events: h.events,
        eventsOf: h.eventsOf,
        now,
        pass: (ms) => h.clock.advance(ms),
        until,
        downFor: (ms) => holding(() => h.clock.advance(ms)),
        removeHandler: (handler) => delete h.handlers[handler],
        held: holding,
        close: () => h.engine.dispose(),
      });
    },
  };
}

function redisBackend(): Backend {
  let server: RedisServer;
  let raw: Redis;
  let prefixes = 0;
  const closers: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    server = await startRedis();
    raw = new Redis(server.url);
  });
  const closeOpened = async () => {
    // Last opened, first closed: the runner (letting runs in flight end) before the client.
    for (const close of closers.splice(0).reverse()) await close();
  };
  afterEach(closeOpened);
  afterAll(async () => {
    await closeOpened();
    await raw?.quit();
    await server?.stop();
  });
  return {
    name: 'redis',
    async open({ ledger, ...options } = {}) {
      const shared = { connection: server.url, prefix: `c${++prefixes}`, partitions: 2, ledger };
      // Last opened, first closed, once: by `close` or by the hooks, whichever comes first.
      const own: (() => Promise<unknown>)[] = [];
      const close = async () => {
        for (const closeOne of own.splice(0).reverse()) await closeOne();
      };
      closers.push(close);
      const records = cancelAllRecordsMode();
      const timers = new RedisTimers({
        ...shared,
        logger: silentLogger,
        tombstoneMs: options.tombstoneMs,
        cancelAllRecords: records.cancelAllRecords,
      });
      records.opened(timers);
      own.push(() => timers.dispose());
      const events: TimerEvent[] = [];
      for (const type of EVENT_NAMES) timers.on(type, (event) => events.push(event));
      let dispatcher = new Dispatcher({ ...shared, logger: silentLogger });
      own.push(() => dispatcher.close());
      await dispatcher.start();
      const held = async <T>(calls: () => Promise<T>) => {
        await dispatcher.close();
        try {
          return await calls();
        } finally {
          dispatcher = new Dispatcher({ ...shared, logger: silentLogger });
          await dispatcher.start();
        }
      };
      const runs: RunRecord[] = [];
      const handlers = { work: workHandler(runs, realSleep), ...options.handlers };
      const runner = new TimerRunner({ ...shared, handlers, logger: silentLogger });
      own.push(() => runner.close(2_000));
      await runner.start();
      const until: Harness['until'] = async (
        probe,
        { within = DEFAULT_WITHIN_MS, what = 'condition' } = {},
      ) => {
        const deadline = Date.now() + within;
        for (;;) {
          const value = await probe();
          if (value !== undefined && value !== false) return value;
          if (Date.now() >= deadline) throw new Error(`redis: ${what} did not happen within ${within} ms`);
          await realSleep(REAL_STEP_MS);
        }
      };
      return withEvents({
        backend: 'redis',
        timers,
        runs,
        events,
        eventsOf: (type) => events.filter((event) => event.type === type),
        now: () => redisNow(raw),
        pass: realSleep,
        until,
        downFor: (ms) => backdateRows(raw, `${shared.prefix}:`, ms),
        removeHandler: (handler) => Reflect.deleteProperty(handlers, handler),
        held,
        close,
      });
    },
  };
}

/** The `work` handler: records the run, sleeps `sleepMs` on the backend's time (ended early by an abort), then throws if asked. */
function workHandler(
  runs: RunRecord[],
  sleep: (ms: number, signal: AbortSignal) => Promise<void>,
): TimerHandler {
  return async (payload: JsonValue, ctx: TimerContext) => {
    const { key, id, version, due, runCount, attempt, signal, timer } = ctx;
    runs.push({ key, id, version, due, at: timer.lastFiredAt ?? due, runCount, attempt, signal, timer });
    const knobs = (payload ?? {}) as WorkPayload;
    if (knobs.sleepMs) await sleep(knobs.sleepMs, signal);
    if (knobs.fail) throw Object.assign(new Error(knobs.fail), knobs.reason ? { reason: knobs.reason } : {});
  };
}

function withEvents(h: Omit<Harness, 'event' | 'eventsOnceCome' | 'started'>): Harness {
  return {
    ...h,
    event: (expected, options = {}) =>
      h.until(() => h.events.find((event) => matches(event, expected)), {
        what: `event ${JSON.stringify(expected)}`,
        ...options,
      }),
    eventsOnceCome: (type, count, options = {}) =>
      h.until(
        () => {
          const events = h.eventsOf(type);
          return events.length >= count && events;
        },
        { what: `${count} ${type} events`, ...options },
      ),
    started: (expected, options = {}) =>
      h.until(() => h.runs.find((run) => matches(run, expected)), {
        what: `a run of ${JSON.stringify(expected)}`,
        ...options,
      }),
  };
}

/** Whether `record` has every field of `expected` (an event, or a run). */
export function matches<T extends object>(record: T, expected: Partial<T>): boolean {
  return Object.entries(expected).every(([field, value]) => record[field as keyof T] === value);
}

function sleepOn(
  clock: { setTimeout(fn: () => void, ms: number): unknown },
  ms: number,
  signal: AbortSignal,
): Promise<void> {
  return new Promise((resolve) => {
    clock.setTimeout(resolve, ms);
    signal.addEventListener('abort', () => resolve());
  });
}

function realSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export { type RunRecord, START };
