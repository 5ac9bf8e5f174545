import {
  type AppProcess,
  clusterEnv,
  ensureBuilt,
  faketimeEnv,
  hasFaketime,
  killAll,
  type RedisServer,
  spawnApp,
  startRedis,
} from '@sundial/testing';
import { Redis } from 'ioredis';

const HOUR_MS = 3_600_000;

/**
 * docs/spec.md §5.2: every answer of the scheduler carries `Sundial-Now`, its estimate of Redis's now in
 * epoch ms (§4.4: the clock due times are on), so the operator UI and the CLI measure "now" from it. The
 * scheduler runs under libfaketime an hour ahead: its `Date` header says so, its `Sundial-Now` does not.
 */
(hasFaketime() ? describe : describe.skip)('Sundial-Now: the scheduler says Redis’s now', () => {
  let redis: RedisServer;
  let raw: Redis;
  let scheduler: AppProcess;

  beforeAll(async () => {
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
    raw = new Redis(redis.url);
    scheduler = await spawnApp('scheduler', 'scheduler', clusterEnv(redis.url, faketimeEnv('+1h')));
  }, 120_000);

  afterAll(async () => {
    await killAll(scheduler ? [scheduler] : []);
    raw?.disconnect();
    await redis?.stop();
  });

  const redisNow = async (): Promise<number> => {
    const [seconds, micros] = await raw.time();
    return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
  };

  it.each([
    ['GET', '/v1/timers', 200],
    ['GET', '/v1/timers/no%3Asuch', 404],
    ['OPTIONS', '/v1/timers', 204],
    ['GET', '/health/live', 200],
    ['GET', '/ui/', 200],
  ])('%s %s (%d) carries it', async (method, path, status) => {
    const before = await redisNow();
    const response = await fetch(`${scheduler.url}${path}`, { method });
    const after = await redisNow();
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
