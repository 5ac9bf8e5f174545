import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SundialModule, SundialWorkerModule } from '@sundial/client';
import { silentLogger, type TimerHandler } from '@sundial/core';
import { Dispatcher, parseRedisUrl, RedisTimers, SundialMetrics, TimerRunner } from '@sundial/redis';
import { epochNow } from '../processes/clock';
import type { ChildConfig, RunRecord, RunningRole } from '../processes/protocol';
import { BENCH_PAYLOAD, type Contender, type ContenderFactory, type OneShot } from './contender';

/**
 * Sundial as an application uses it: RedisTimers in the caller, a Dispatcher elsewhere, and the handlers
 * run by SundialWorkerModule (the @nestjs/bullmq path apps/worker and users' apps take).
 */
const HANDLER = 'bench.noop';

export const createSundialContender: ContenderFactory = (redisUrl) => sundialContender(redisUrl);

/**
 * The same, with the handlers run by a bare TimerRunner (its own BullMQ Workers, no Nest): what the
 * @nestjs/bullmq path costs is the difference (issue 9).
 */
export const createSundialRunnerContender: ContenderFactory = (redisUrl) =>
  sundialContender(redisUrl, { name: 'sundial-runner', workerRole: 'sundial-runner' });

/** On `partitions` partitions (a Redis Cluster spreads them over its primaries). */
export function sundialOnPartitions(partitions: number): ContenderFactory {
  return (redisUrl) => sundialContender(redisUrl, { partitions });
}

function sundialContender(
  redisUrl: string,
  variant: Partial<Pick<Contender, 'name' | 'workerRole' | 'partitions'>> = {},
): Contender {
  const partitions = variant.partitions ?? 1;
  // cancelAll through scope records (one release on the Redis: docs/spec.md §5.5; bench/README.md, 6.)
  const timers = new RedisTimers({ connection: redisUrl, partitions, cancelAllRecords: true });
  return {
    name: variant.name ?? 'sundial',
    workerRole: variant.workerRole ?? 'sundial-worker',
    serviceRoles: ['sundial-dispatcher'],
    partitions,
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

/** Records each handler start; with `claims` its claim instant too (`ctx.claimedAt`, Redis's clock). */
function benchHandler(config: ChildConfig, record: (run: RunRecord) => void): TimerHandler {
  if (!config.claims) return (_payload, ctx) => void record([ctx.key, ctx.due, epochNow()]);
  return (_payload, ctx) => {
    const start = epochNow();
    record([ctx.key, ctx.due, start, ctx.claimedAt]);
  };
}

export async function startSundialWorker(
  config: ChildConfig,
  record: (run: RunRecord) => void,
): Promise<RunningRole> {
  const partitions = config.partitions ?? 1;
  const tagging = parseRedisUrl(config.redisUrl).kind === 'cluster' ? 'spread' : 'plain';
  @Module({
    imports: [
      SundialModule.forRoot({ connection: config.redisUrl, partitions, logger: silentLogger }),
      SundialWorkerModule.forRoot({
        concurrency: config.concurrency,
        partitions,
        tagging,
        handlers: { [HANDLER]: benchHandler(config, record) },
      }),
    ],
  })
  class BenchWorkerModule {}
  const app = await NestFactory.createApplicationContext(BenchWorkerModule, { logger: false });
  await app.init();
  return { close: () => app.close() };
}

/**
 * The same handler on a TimerRunner of its own: no Nest, no @nestjs/bullmq processors. It records run
 * metrics as SundialWorkerModule's runner does (a SundialMetrics on prom-client's global registry), so the
 * two rows differ by the Nest path alone and not by the metrics each run costs.
 */
export async function startSundialRunner(
  config: ChildConfig,
  record: (run: RunRecord) => void,
): Promise<RunningRole> {
  const runner = new TimerRunner({
    connection: config.redisUrl,
    partitions: config.partitions,
    concurrency: config.concurrency,
    observer: new SundialMetrics(),
    logger: silentLogger,
    handlers: { [HANDLER]: benchHandler(config, record) },
  });
  await runner.start();
  return { close: () => runner.close() };
}

/** The scheduler process's part of the fire path: turns due rows into fire jobs. */
export async function startSundialDispatcher(config: ChildConfig): Promise<RunningRole> {
  const dispatcher = new Dispatcher({
    connection: config.redisUrl,
    partitions: config.partitions,
    logger: silentLogger,
  });
  await dispatcher.start();
  return { close: () => dispatcher.close() };
}
