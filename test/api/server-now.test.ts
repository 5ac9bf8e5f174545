import {
  type AppProcess,
  clusterEnv,
  ensureBuilt,
  faketimeEnv,
  hasFaketime,
  killAll,
  redisNow,
  type RedisServer,
  spawnApp,
  startRedis,
} from '@sundial/testing/harness';
import { Redis } from 'ioredis';

const HOUR_MS = 3_600_000;

/**
 * docs/spec.md §5.2, §5.3: every answer of the scheduler and of the worker carries `Sundial-Now`, its
 * estimate of Redis's now in epoch ms (§4.4: the clock due times are on), so the operator UI and the CLI
 * measure "now" from it. Both apps run under libfaketime an hour ahead: their `Date` header says so, their
 * `Sundial-Now` does not.
 */
(hasFaketime() ? describe : describe.skip)('Sundial-Now: the apps say Redis’s now', () => {
  let redis: RedisServer;
  let raw: Redis;
  let scheduler: AppProcess;
  let worker: AppProcess;

  beforeAll(async () => {
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
    raw = new Redis(redis.url);
    const env = clusterEnv(redis.url, faketimeEnv('+1h'));
    [scheduler, worker] = await Promise.all([
      spawnApp('scheduler', 'scheduler', env),
      spawnApp('worker', 'worker', env),
    ]);
  }, 120_000);

  afterAll(async () => {
    await killAll([scheduler, worker]);
    raw?.disconnect();
    await redis?.stop();
  });

  it.each([
    ['scheduler', 'GET', '/v1/timers', 200],
    ['scheduler', 'GET', '/v1/timers/no%3Asuch', 404],
    ['scheduler', 'OPTIONS', '/v1/timers', 204],
    ['scheduler', 'GET', '/health/live', 200],
    ['scheduler', 'GET', '/ui/', 200],
    ['worker', 'GET', '/health/live', 200],
    ['worker', 'GET', '/health/ready', 200],
    ['worker', 'GET', '/metrics', 200],
  ])('%s: %s %s (%d) carries it', async (app, method, path, status) => {
    const before = await redisNow(raw);
    const response = await fetch(`${(app === 'worker' ? worker : scheduler).url}${path}`, { method });
    const after = await redisNow(raw);
    await response.arrayBuffer();
    expect(response.status).toBe(status);
    const now = Number(response.headers.get('sundial-now'));
    // between the two reads of Redis's clock, with slack for the estimate (off by up to half the round trip
    // it was measured with: a loaded host's can take a few hundred ms); the process's clock is an hour off
    expect(now).toBeGreaterThanOrEqual(before - 500);
    expect(now).toBeLessThanOrEqual(after + 500);
    // the process's own clock, which the Date header reads, is an hour ahead
    const date = Date.parse(response.headers.get('date')!);
    expect(Math.abs(date - HOUR_MS - now)).toBeLessThan(5_000);
  });

  it('/docs-json lists it, required, on every response of every operation', async () => {
    const response = await fetch(`${scheduler.url}/docs-json`);
    const document = (await response.json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { headers?: object }> }>>;
    };
    const without = Object.entries(document.paths).flatMap(([path, operations]) =>
      Object.entries(operations).flatMap(([method, { responses }]) =>
        Object.entries(responses)
          .filter(([, answer]) => !('Sundial-Now' in (answer.headers ?? {})))
          .map(([status]) => `${method} ${path} ${status}`),
      ),
    );
    expect(without).toEqual([]);
  });
});
