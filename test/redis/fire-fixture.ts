import {
  type JsonValue,
  type LedgerEntry,
  silentLogger,
  type TimerContext,
  type TimerEvent,
  type TimerHandler,
} from '@sundial/core';
import {
  Dispatcher,
  type DispatcherOptions,
  defineCommands,
  FireCommands,
  type FireJobData,
  Reconciler,
  type ReconcilerOptions,
  RedisTimers,
  TimerRunner,
  type TimerRunnerOptions,
  type TimerRef,
} from '@sundial/redis';
import { Queue } from 'bullmq';
import Redis from 'ioredis';
import { type RedisServer, redisNow, startRedis, waitFor } from '@sundial/testing/harness';

const quiet = silentLogger;

/** One prefix's worth of the fire path: a client, and dispatchers / runners / reconcilers on demand. */
export interface FireCluster {
  prefix: string;
  timers: RedisTimers;
  commands: FireCommands;
  /** every event published on `P:events`, in order */
  events: TimerEvent[];
  dispatcher(options?: Partial<DispatcherOptions>): Promise<Dispatcher>;
  runner(handlers: Record<string, TimerHandler>, options?: Partial<TimerRunnerOptions>): Promise<TimerRunner>;
  reconciler(options?: Partial<ReconcilerOptions>): Reconciler;
  /** the BullMQ queue of a key's partition, for adding or removing fire jobs behind the runtime's back */
  queueOf(key: string): Queue<FireJobData>;
  partitionOf(key: string): number;
  /** the jobId of the fire job a handed-off key waits for: recorded in `jobs` at its `armed` score */
  jobOf(key: string): Promise<string>;
  /** Redis now (ms) by TIME */
  redisNow(): Promise<number>;
}

/**
 * One private redis-server per suite; each cluster gets a fresh prefix, and everything a test opened is
 * closed after it. Jest runs no afterEach for an `it.concurrent` test: what those opened is closed after
 * the suite. `raw` is a plain connection with the Lua commands defined.
 */
export function useFirePath() {
  let server: RedisServer;
  let prefixes = 0;
  const closers: (() => Promise<unknown>)[] = [];
  const fixture = {
    raw: undefined as unknown as Redis,
    url: () => server.url,
    async cluster(
      options: { partitions?: number; cancelAllRecords?: boolean; prefix?: string } = {},
    ): Promise<FireCluster> {
      const prefix = options.prefix ?? `f${++prefixes}`;
      const partitions = options.partitions ?? 1;
      const shared = { connection: server.url, prefix, partitions };
      const timers = new RedisTimers({
        ...shared,
        logger: quiet,
        cancelAllRecords: options.cancelAllRecords,
      });
      closers.push(() => timers.dispose());
      const events: TimerEvent[] = [];
      const subscriber = fixture.raw.duplicate();
      closers.push(() => subscriber.quit());
      subscriber.on('message', (_channel: string, message: string) =>
        events.push(JSON.parse(message) as TimerEvent),
      );
      await subscriber.subscribe(`${prefix}:events`);
      const queues = new Map<number, Queue<FireJobData>>();
      return {
        prefix,
        timers,
        commands: new FireCommands(fixture.raw, timers.keys),
        events,
        async dispatcher(more = {}) {
          const dispatcher = new Dispatcher({ ...shared, logger: quiet, ...more });
          closers.push(() => dispatcher.close());
          await dispatcher.start();
          return dispatcher;
        },
        async runner(handlers, more = {}) {
          const runner = new TimerRunner({ ...shared, handlers, logger: quiet, ...more });
          closers.push(() => runner.close(0));
          await runner.start();
          return runner;
        },
        reconciler(more = {}) {
          const reconciler = new Reconciler({ ...shared, logger: quiet, ...more });
          closers.push(() => reconciler.close());
          return reconciler;
        },
        queueOf(key) {
          const partition = timers.keys.partitionOf(key);
          let queue = queues.get(partition);
          if (!queue) {
            queue = new Queue<FireJobData>(timers.keys.queueName(partition), {
              connection: { host: '127.0.0.1', port: server.port },
              prefix: timers.keys.bullPrefix,
            });
            queues.set(partition, queue);
            const opened = queue;
            closers.push(() => opened.close());
          }
          return queue;
        },
        partitionOf: (key) => timers.keys.partitionOf(key),
        async jobOf(key) {
          const partition = timers.keys.partitionOf(key);
          const at = await fixture.raw.zscore(timers.keys.armed(partition), key);
          const [record] =
            at === null ? [] : await fixture.raw.zrangebyscore(timers.keys.jobs(partition), at, at);
          if (record === undefined) throw new Error(`no job recorded for ${key}`);
          return record.split('@')[0]; // `<jobId>@<ms>`: a later take-due's part of the job
        },
        redisNow: () => redisNow(fixture.raw),
      };
    },
  };

  beforeAll(async () => {
    server = await startRedis();
    fixture.raw = new Redis(server.url);
    defineCommands(fixture.raw);
  });
  // Last opened, first closed: runners before the client whose rows they complete.
  const closeAll = async () => {
    for (const close of closers.splice(0).reverse()) await close();
  };
  afterEach(closeAll);
  afterAll(async () => {
    await closeAll();
    await fixture.raw?.quit();
    await server?.stop();
  });
  return fixture;
}

/** How many times Redis ran `command` since the last CONFIG RESETSTAT (inside scripts too). */
export async function commandCalls(redis: Redis, command: string): Promise<number> {
  const info = await redis.info('commandstats');
  return Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
}

export { redisNow };

/** Waits until `events` holds one matching `expected`, and returns it. */
export function eventually(
  events: TimerEvent[],
  expected: Partial<TimerEvent>,
  timeoutMs = 5_000,
): Promise<TimerEvent> {
  return waitFor(() => events.find((event) => matches(event, expected)), {
    timeoutMs,
    what: `event ${JSON.stringify(expected)}`,
  });
}

export function matching(events: TimerEvent[], expected: Partial<TimerEvent>): TimerEvent[] {
  return events.filter((event) => matches(event, expected));
}

function matches(event: TimerEvent, expected: Partial<TimerEvent>): boolean {
  return Object.entries(expected).every(([field, value]) => event[field as keyof TimerEvent] === value);
}

/** A promise that something else opens. */
export interface Gate {
  promise: Promise<void>;
  open(): void;
}

export function gate(): Gate {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** A handler that records every call; `behaviour` decides what each call does. */
export function recorder(
  behaviour: (ctx: TimerContext<JsonValue>, call: number) => unknown = () => undefined,
) {
  const calls: TimerContext<JsonValue>[] = [];
  const handler: TimerHandler = (_payload, ctx) => {
    calls.push(ctx);
    return behaviour(ctx, calls.length);
  };
  return { calls, handler };
}

/** A ref as a fire job carries it. */
export function refOf(timer: { id: string; key: string; version: number; dueAt: number }): TimerRef {
  return { id: timer.id, key: timer.key, version: timer.version, due: timer.dueAt };
}

/** A deterministic pseudo-random source (mulberry32), so a failing race iteration can be replayed. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Abort-aware work: resolves after `ms`, or rejects with the signal's reason once it aborts. */
export function work(signal: AbortSignal, ms: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    });
  });
}

/** A history oldest first, as `[event, version, reason?]`: the order things happened in. */
export function story(entries: LedgerEntry[]): (string | number)[][] {
  return [...entries]
    .reverse()
    .map(({ event, version, reason }) => (reason ? [event, version, reason] : [event, version]));
}

/**
 * A worker that claimed `timer` once it was due (by Redis's clock) and then died: its lease (`leaseMs`)
 * is never renewed.
 */
export async function claimAndDie(
  cluster: FireCluster,
  timer: Parameters<typeof refOf>[0],
  leaseMs: number,
  workerId = 'dead-worker',
): Promise<void> {
  await waitFor(async () => (await cluster.redisNow()) >= timer.dueAt, { intervalMs: 5, what: 'due' });
  const [claim] = await cluster.commands.claim(0, leaseMs, workerId, [refOf(timer)]);
  if (claim.kind !== 'claimed')
    throw new Error(`the dead worker's claim of ${timer.key} answered ${claim.kind}`);
}

/** The lease of `member` (a key, or `key|version` for a free run) in partition 0 has expired by Redis's clock. */
export async function leaseExpired(cluster: FireCluster, raw: Redis, member: string): Promise<void> {
  const leases = cluster.timers.keys.leases(0);
  await waitFor(async () => Number(await raw.zscore(leases, member)) < (await cluster.redisNow()), {
    intervalMs: 10,
    what: 'lease expiry',
  });
}

/**
 * A one-shot (handler 'h', due now) claimed by a worker that then dies: its lease (100 ms) runs out and
 * nothing settles it until a claim of a redelivered job or a reconcile pass does.
 */
export async function claimedByDeadWorker(
  cluster: FireCluster,
  raw: Redis,
  key: string,
  delivery: 'at-least-once' | 'at-most-once',
) {
  const timer = await cluster.timers.schedule({
    key,
    handler: 'h',
    delay: 0,
    delivery,
    removeOnComplete: false,
  });
  await claimAndDie(cluster, timer, 100);
  await leaseExpired(cluster, raw, key);
  return timer;
}

/**
 * Two one-shots claimed by a worker that then died — `lost:once` at-most-once, `lost:again` at-least-once —
 * whose fire job BullMQ delivers again (one job naming both): the claim of a live runner settles both.
 */
export async function redeliveredLostRuns(cluster: FireCluster, raw: Redis) {
  const once = await claimedByDeadWorker(cluster, raw, 'lost:once', 'at-most-once');
  const again = await claimedByDeadWorker(cluster, raw, 'lost:again', 'at-least-once');
  await cluster
    .queueOf('lost:once')
    .add('fire', { timers: [refOf(once), refOf(again)] }, { jobId: 'redelivered' });
  return { once, again };
}
