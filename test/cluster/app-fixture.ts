import { type AppProcess, ensureBuilt, killAll, type RedisServer, startRedis } from '@sundial/testing';

/**
 * A suite's private Redis (started beside the build check) and the apps its tests spawn, killed after
 * the suite.
 */
export function useAppsOnPrivateRedis(): { redis: () => RedisServer; apps: AppProcess[] } {
  let redis: RedisServer | undefined;
  const apps: AppProcess[] = [];
  beforeAll(async () => {
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
  }, 180_000);
  afterAll(async () => {
    await killAll(apps);
    await redis?.stop();
  });
  return { redis: () => redis!, apps };
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
