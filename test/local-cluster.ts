import type { INestApplication } from '@nestjs/common';
import type { AddressInfo } from 'node:net';
import { createRedisSchedulerService } from '../apps/scheduler/src/redis-scheduler-service';
import { createSchedulerApp } from '../apps/scheduler/src/scheduler-app';
import type { SchedulerConfig } from '../apps/scheduler/src/scheduler-config';
import { schedulerConfigFromEnv } from '../apps/scheduler/src/scheduler-config';
import type { HandlerMap } from '../apps/worker/src/handlers-module';
import { createWorkerApp } from '../apps/worker/src/worker-app';
import type { WorkerConfig } from '../apps/worker/src/worker-config';
import { workerConfigFromEnv } from '../apps/worker/src/worker-config';
import { type HttpClient, httpClient } from '@sundial/testing/harness';

/** Settings that keep a test cluster quick: errors-only logs, fast reconcile. */
export const TEST_ENV = { LOG_LEVEL: 'error', SUNDIAL_RECONCILE_MS: '200' };

export interface RunningApp {
  url: string;
  api: HttpClient;
  close(): Promise<void>;
}

/** The scheduler app in this process, listening on a free port of 127.0.0.1. */
export async function startScheduler(
  redisUrl: string,
  overrides: Partial<SchedulerConfig> = {},
): Promise<RunningApp> {
  const config = { ...schedulerConfigFromEnv({ ...TEST_ENV, REDIS_URL: redisUrl }), ...overrides };
  return listen(await createSchedulerApp(config, createRedisSchedulerService));
}

/** The worker app in this process with `handlers` added to the built-ins. */
export async function startWorker(
  redisUrl: string,
  handlers: HandlerMap = {},
  overrides: Partial<WorkerConfig> = {},
): Promise<RunningApp> {
  const config = { ...workerConfigFromEnv({ ...TEST_ENV, REDIS_URL: redisUrl }), ...overrides };
  return listen(await createWorkerApp(config, handlers));
}

async function listen(app: INestApplication): Promise<RunningApp> {
  await app.listen(0, '127.0.0.1');
  const { port } = app.getHttpServer().address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return { url, api: httpClient(url), close: () => app.close() };
}
