import type { INestApplication } from '@nestjs/common';
import { createEngine, type TimerHandler } from '@sundial/core';
import { type HttpClient, httpClient, type RedisServer, startRedis } from '@sundial/testing/harness';
import type { AddressInfo } from 'node:net';
import { createSchedulerApp } from '../../apps/scheduler/src/scheduler-app';
import { schedulerConfigFromEnv } from '../../apps/scheduler/src/scheduler-config';
import type { SchedulerServiceFactory } from '../../apps/scheduler/src/scheduler-service';
import { type RunningApp, startScheduler, TEST_ENV } from '../local-cluster';

/**
 * The scheduler's API over the in-memory engine: the same controllers, no Redis but the health ping's. Its
 * `log` runs until the engine is disposed, so a timer a trigger or backfill started stays as it was read
 * (over Redis, no worker runs it).
 */
const overEngine: SchedulerServiceFactory = () => {
  const log: TimerHandler = (_payload, { signal }) =>
    new Promise((resolve) => signal.addEventListener('abort', () => resolve(undefined)));
  const timers = createEngine({ handlers: { log } });
  return { timers, start: async () => undefined, stop: () => timers.dispose() };
};

export type Backend = 'redis' | 'engine';

/**
 * The scheduler app over `backend` — Redis (a private one; `partitions` of it, default 1) or the in-memory
 * engine, the library's other backend — for the suite that calls this (beforeAll/afterAll): its API and
 * address.
 */
export function useBackendScheduler(
  backend: Backend,
  partitions = 1,
): { readonly api: HttpClient; readonly url: string } {
  let redis: RedisServer | undefined;
  let running: RunningApp | undefined;
  let app: INestApplication | undefined;
  let url = '';

  beforeAll(async () => {
    redis = await startRedis();
    if (backend === 'redis') {
      running = await startScheduler(redis.url, { partitions });
      url = running.url;
      return;
    }
    app = await createSchedulerApp(schedulerConfigFromEnv({ ...TEST_ENV, REDIS_URL: redis.url }), overEngine);
    await app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await running?.close();
    await app?.close();
    await redis?.stop();
  });

  return {
    get api() {
      return httpClient(url);
    },
    get url() {
      return url;
    },
  };
}
