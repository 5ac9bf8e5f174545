import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger, type SundialLogger, type TimersApi } from '@sundial/core';
import { RedisTimers } from '@sundial/redis';
import { type RedisServer, startRedis, waitFor } from '@sundial/testing/harness';
import {
  SchedulesFollower,
  type SchedulesStatus,
} from '../../apps/scheduler/src/schedules/schedules-follower';

export const FOLLOW_DEADLINE_MS = 2_000; // deadline: the spec's second, plus room for a loaded host

/** Resolves once `probe` gives something, within the follower's deadline. */
export const within = <T>(
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
) => waitFor(probe, { timeoutMs: FOLLOW_DEADLINE_MS, intervalMs: 10, what });

/** A file of `{ key, handler: log, every }` rows. */
export const file = (
  keys: string[],
  every: (key: string) => string = (key) => (key === 'k0' ? '1h' : '2h'),
) => `timers:\n${keys.map((key) => `  - { key: ${key}, handler: log, every: ${every(key)} }`).join('\n')}\n`;

/**
 * Counts the follower's calls on its TimersApi (the real RedisTimers behind it); `hook` runs first.
 * `on` (an event subscription, not a call to Redis) is passed through.
 */
export function counted(timers: TimersApi, hook?: (name: string, args: unknown[]) => Promise<void>) {
  const calls: Record<string, number> = {};
  const api = new Proxy(timers, {
    get(target, name: string) {
      const value: unknown = Reflect.get(target, name);
      if (typeof value !== 'function' || name === 'on') return value;
      return async (...args: unknown[]) => {
        calls[name] = (calls[name] ?? 0) + 1;
        await hook?.(name, args);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { api, calls };
}

export interface LoggedLine {
  level: string;
  message: string;
  fields?: Record<string, unknown>;
}

/**
 * The suites of the schedules follower beside one private Redis: `setUp(prefix, text)` gives each case
 * a file, prefix and followers of its own, all stopped and removed after the case.
 */
export function followersOnRedis() {
  let redis: RedisServer;
  const cleanups: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    redis = await startRedis();
  });

  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  afterAll(async () => {
    await redis?.stop();
  });

  /** A file of its own, its prefix's RedisTimers, and `start(api?)` for each replica following it. */
  async function setUp(prefix: string, text: string) {
    const dir = mkdtempSync(join(tmpdir(), `sundial-${prefix}-`));
    const path = join(dir, 'schedules.yaml');
    writeFileSync(path, text);
    const timers = new RedisTimers({ connection: redis.url, prefix });
    cleanups.push(async () => {
      await timers.dispose();
      rmSync(dir, { recursive: true, force: true });
    });
    const statuses: SchedulesStatus[] = [];
    const lines: LoggedLine[] = [];
    const logger: SundialLogger = {
      ...silentLogger,
      info: (message, fields) => void lines.push({ level: 'info', message, fields }),
      warn: (message, fields) => void lines.push({ level: 'warn', message, fields }),
    };
    const start = async (api: TimersApi = timers, retryRefusedMs?: number) => {
      const follower = new SchedulesFollower({
        path,
        timers: api,
        limits: {},
        logger,
        retryRefusedMs,
        onStatus: (status) => void statuses.push(status),
      });
      cleanups.push(() => follower.stop());
      await follower.start();
      return follower;
    };
    const ids = async () =>
      new Map((await timers.list({ limit: 1000 })).items.map((timer) => [timer.key, timer.id]));
    /** Resolves once a pass after now applied a text of `rows` rows. */
    const applied = (rows: number, what: string) => {
      const from = statuses.length;
      return waitFor(() => statuses.slice(from).some((status) => status.appliedAt && status.rows === rows), {
        timeoutMs: FOLLOW_DEADLINE_MS,
        intervalMs: 10,
        what,
      });
    };
    /** Writes back `text`, which the rows `before` were applied from: applied, it writes nothing. */
    const backAsItWas = async (
      text: string,
      rows: number,
      linesFrom: number,
      before: Map<string, string>,
    ) => {
      const back = applied(rows, 'the file back');
      writeFileSync(path, text);
      await back;
      expect(lines.slice(linesFrom).filter((line) => line.message.startsWith('schedules file: row'))).toEqual(
        [],
      );
      expect(await ids()).toEqual(before);
    };
    return { path, timers, start, ids, applied, statuses, lines, backAsItWas };
  }

  return { setUp, url: () => redis.url };
}
