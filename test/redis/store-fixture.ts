import { silentLogger, SundialError, type Timer, type TimerEvent, type TimerEventName } from '@sundial/core';
import { defineCommands, FireCommands, RedisTimers, type RedisTimersOptions } from '@sundial/redis';
import Redis from 'ioredis';
import { type RedisServer, startRedis, waitFor } from '@sundial/testing/harness';

export { eventually, redisNow } from './fire-fixture';

export interface LogLine {
  level: 'warn' | 'error';
  message: string;
  fields?: Record<string, unknown>;
}

/**
 * One private redis-server per suite; every test gets clients on its own prefix, so tests never see
 * each other's keys. `raw` is a plain connection for looking at (or setting up) the data directly.
 */
export function useStore() {
  let server: RedisServer;
  let prefixes = 0;
  const opened: RedisTimers[] = [];
  const fixture = {
    raw: undefined as unknown as Redis,
    url: () => server.url,
    logs: [] as LogLine[],
    /** A client on a fresh prefix (or the given one, to share a prefix between clients). */
    open(options: Partial<RedisTimersOptions> = {}): RedisTimers {
      const timers = new RedisTimers({
        connection: server.url,
        prefix: `s${++prefixes}`,
        logger: {
          ...silentLogger,
          warn: (message, fields) => fixture.logs.push({ level: 'warn', message, fields }),
          error: (message, fields) => fixture.logs.push({ level: 'error', message, fields }),
        },
        ...options,
      });
      opened.push(timers);
      return timers;
    },
  };

  beforeAll(async () => {
    server = await startRedis();
    fixture.raw = new Redis(server.url);
    defineCommands(fixture.raw);
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((timers) => timers.dispose()));
    fixture.logs.length = 0;
  });
  afterAll(async () => {
    await fixture.raw?.quit();
    await server?.stop();
  });
  return fixture;
}

/** Collects the events of the given types that reach `timers` (subscribed before the next call returns). */
export function record(timers: RedisTimers, ...types: TimerEventName[]): TimerEvent[] {
  const seen: TimerEvent[] = [];
  for (const type of types) timers.on(type, (event) => seen.push(event));
  return seen;
}

/** What a refused call threw: a SundialError (the test then checks its reason and field). */
export async function refusal(promise: Promise<unknown>): Promise<SundialError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SundialError);
  return error as SundialError;
}

/**
 * Every Redis key under a prefix but `P:partitions`, `P:epoch` and the partitions' `P:{pN}:epoch` (the
 * layout's record and the data markers, written at start) and `P:dispatchers` (the running dispatchers'
 * presence), sorted (tests only: KEYS is fine on a private server).
 */
export async function keysUnder(raw: Redis, prefix: string): Promise<string[]> {
  const written = [`${prefix}:partitions`, `${prefix}:epoch`, `${prefix}:dispatchers`];
  const marker = /^[^{]*:\{[^}]*\}:epoch$/;
  return (await raw.keys(`${prefix}:*`)).filter((key) => !written.includes(key) && !marker.test(key)).sort();
}

/** Puts a due timer into `running` through the fire path's real claim script, as a worker would. */
export async function claim(raw: Redis, timers: RedisTimers, timer: Timer): Promise<void> {
  const fire = new FireCommands(raw, timers.keys);
  const { id, key, version, dueAt: due } = timer;
  const [result] = await fire.claim(timers.keys.partitionOf(key), 30_000, 'test-worker', [
    { id, key, version, due },
  ]);
  expect(result.kind).toBe('claimed');
}

/** The events published on `prefix` from now (a listener of its own on `url`). */
export async function eventsOn(raw: Redis, url: string, prefix: string) {
  const listener = new Redis(url);
  const messages: string[] = [];
  await listener.subscribe(`${prefix}:events`);
  listener.on('message', (_channel: string, message: string) => messages.push(message));
  return {
    /** the events published so far: a message published now arrives after them */
    async all(): Promise<TimerEvent[]> {
      await raw.publish(`${prefix}:events`, 'end');
      await waitFor(() => messages.includes('end') || undefined, { what: 'the end message' });
      messages.splice(messages.indexOf('end'), 1);
      return messages.map((message) => JSON.parse(message) as TimerEvent);
    },
    close: () => listener.disconnect(),
  };
}
