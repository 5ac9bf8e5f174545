import {
  type AppProcess,
  killAll,
  spawnApp,
  ensureBuilt,
  type RedisServer,
  startRedis,
  waitFor,
} from '@sundial/testing/harness';

/** Redis is away this long: several reconnect attempts of every app's connections. */
const OUTAGE_MS = 6_000;

/**
 * Defect 9 of issue 8: while Redis is down, every line the apps print is a JSON log record — no
 * `[ioredis] Unhandled error event` stack traces from a connection without an `error` listener.
 */
describe('logs during a Redis outage', () => {
  let redis: RedisServer;
  let apps: AppProcess[] = [];

  beforeAll(async () => {
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
    const env = { REDIS_URL: redis.url, SUNDIAL_PARTITIONS: '2', SUNDIAL_RECONCILE_MS: '300' };
    apps = await Promise.all([
      spawnApp('scheduler', 'scheduler', env),
      spawnApp('worker', 'worker-0', env),
      spawnApp('worker', 'worker-1', env),
    ]);
  }, 180_000);

  afterAll(async () => {
    await killAll(apps);
    await redis?.stop();
  });

  it('every line on stdout and stderr parses as JSON while Redis is gone', async () => {
    const [scheduler] = apps;
    const created = await scheduler.api('POST', '/v1/timers', { key: 'k', handler: 'log', every: '1s' });
    expect(created.status).toBe(201);
    const before = apps.map((app) => app.lines.length);
    const outage = redis.restart(OUTAGE_MS);
    await waitFor(async () => (await scheduler.api('GET', '/health/ready')).status === 503, {
      what: 'readiness to see the outage',
    });
    const refused = await scheduler.api('POST', '/v1/timers', { key: 'k2', handler: 'log', delay: '1m' });
    expect(refused.status).toBe(503);
    await outage;
    // Every app went through several failed reconnects: a connection without an error listener would
    // print a non-JSON trace on each. The attempts are logged as a first error and then counted (§5.5),
    // so each app's recovery line must count at least two more after its first.
    const counted = (i: number): number =>
      Math.max(
        0,
        ...apps[i].lines
          .slice(before[i])
          .map((line) => /connected again \((\d+) errors not logged/.exec(line)?.[1])
          .map(Number)
          .filter(Number.isFinite),
      );
    await waitFor(() => apps.every((_, i) => counted(i) >= 2), {
      timeoutMs: 20_000,
      what: 'every app to recover, counting at least two reconnects after its first error',
    });
    const printed = apps.flatMap((app, i) =>
      app.lines.slice(before[i]).map((line) => `${app.name}: ${line}`),
    );
    const notJson = printed.filter((line) => !isJson(line.slice(line.indexOf(': ') + 2)));
    expect(notJson).toEqual([]);
  }, 60_000);
});

function isJson(line: string): boolean {
  try {
    return typeof JSON.parse(line) === 'object';
  } catch {
    return false;
  }
}
