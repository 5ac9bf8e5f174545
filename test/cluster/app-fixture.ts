import { RedisTimers } from '@sundial/redis';
import { Redis } from 'ioredis';
import {
  type AppProcess,
  ensureBuilt,
  killAll,
  type RedisServer,
  startRedis,
} from '@sundial/testing/harness';

/** What useAppsOnPrivateRedis gives a suite. */
export interface AppsOnPrivateRedis {
  redis: () => RedisServer;
  /** the apps the tests spawn (push them, or splice to replace them): killed after the suite */
  apps: AppProcess[];
  /** a client on the suite's Redis (under `prefix`), opened at its first use, disposed after the suite */
  timers: () => RedisTimers;
  /** a plain connection to the suite's Redis, opened at its first use, closed after the suite */
  raw: () => Redis;
}

/**
 * A suite's private Redis (started beside the build check) and the apps its tests spawn, with a client
 * and a plain connection on that Redis when a test asks for them. One afterAll closes all in order: the
 * client and the connection, then the apps, then Redis, so that nothing is left talking to a stopped
 * Redis (no "Connection is closed" noise, no open handles).
 */
export function useAppsOnPrivateRedis(options: { prefix?: string } = {}): AppsOnPrivateRedis {
  let redis: RedisServer | undefined;
  let timers: RedisTimers | undefined;
  let raw: Redis | undefined;
  const apps: AppProcess[] = [];
  beforeAll(async () => {
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
  }, 180_000);
  afterAll(async () => {
    await timers?.dispose();
    raw?.disconnect();
    await killAll(apps);
    await redis?.stop();
  });
  return {
    redis: () => redis!,
    apps,
    timers: () => (timers ??= new RedisTimers({ connection: redis!.url, ...options })),
    raw: () => (raw ??= new Redis(redis!.url)),
  };
}

/** An app's JSON log line (pino's), with the fields these suites read. */
export interface LogLine {
  msg: string;
  level: string;
  fix?: string;
  prefix?: string;
  since?: string;
}

/** The JSON lines an app wrote whose `msg` starts with one of `starts`, parsed; others left out. */
export function appLines(app: AppProcess, ...starts: string[]): LogLine[] {
  return app.lines.flatMap((text) => {
    try {
      const line = JSON.parse(text) as LogLine;
      return starts.some((start) => line.msg.startsWith(start)) ? [line] : [];
    } catch {
      return [];
    }
  });
}
