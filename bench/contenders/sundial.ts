import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SundialModule, SundialWorkerModule } from '@sundial/client';
import { silentLogger } from '@sundial/core';
import { Dispatcher, RedisTimers } from '@sundial/redis';
import type { ChildConfig, RunRecord, RunningRole } from '../processes/protocol';
import { BENCH_PAYLOAD, type Contender, type OneShot } from './contender';

/**
 * Sundial as an application uses it: RedisTimers in the caller, a Dispatcher elsewhere, and the handlers
 * run by SundialWorkerModule (the @nestjs/bullmq path apps/worker and users' apps take).
 */
const HANDLER = 'bench.noop';

export function createSundialContender(redisUrl: string): Contender {
  const timers = new RedisTimers({ connection: redisUrl });
  return {
    name: 'sundial',
    workerRole: 'sundial-worker',
    serviceRoles: ['sundial-dispatcher'],
    async scheduleMany(batch: readonly OneShot[]) {
      await timers.scheduleMany(
        batch.map(({ key, dueAt }) => ({ key, handler: HANDLER, payload: BENCH_PAYLOAD, at: dueAt })),
      );
    },
    async reschedule(key, dueAt) {
      await timers.reschedule(key, { at: dueAt });
    },
    async cancel(key) {
      await timers.cancel(key);
    },
    cancelAll: (scope) => timers.cancelAll(scope),
    close: () => timers.dispose(),
  };
}

export async function startSundialWorker(
  config: ChildConfig,
  record: (run: RunRecord) => void,
): Promise<RunningRole> {
  @Module({
    imports: [
      SundialModule.forRoot({ connection: config.redisUrl, logger: silentLogger }),
      SundialWorkerModule.forRoot({
        concurrency: config.concurrency,
        handlers: { [HANDLER]: (_payload, ctx) => void record([ctx.key, ctx.due, Date.now()]) },
      }),
    ],
  })
  class BenchWorkerModule {}
  const app = await NestFactory.createApplicationContext(BenchWorkerModule, { logger: false });
  await app.init();
  return { close: () => app.close() };
}

/** The scheduler process's part of the fire path: turns due rows into fire jobs. */
export async function startSundialDispatcher(config: ChildConfig): Promise<RunningRole> {
  const dispatcher = new Dispatcher({ connection: config.redisUrl, logger: silentLogger });
  await dispatcher.start();
  return { close: () => dispatcher.close() };
}
