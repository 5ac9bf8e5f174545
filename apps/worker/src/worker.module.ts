import type { DynamicModule } from '@nestjs/common';
import { Module } from '@nestjs/common';
import { SundialModule, SundialWorker, SundialWorkerModule } from '@sundial/client';
import {
  APP_SERVICE,
  type AppService,
  AppServiceHooks,
  HealthModule,
  LoggingModule,
  sundialLogger,
} from '@sundial/server';
import { parseRedisUrl } from '@sundial/redis';
import type { Logger as Pino } from 'pino';
import type { HandlerMap } from './handlers-module';
import type { WorkerConfig } from './worker-config';

/**
 * The worker: the same `SundialWorkerModule` a user's app imports (one runner code path: @nestjs/bullmq
 * processors handing fire jobs to a TimerRunner), its consumers started and drained with Nest in the
 * order readiness needs, plus /health and /metrics.
 */
@Module({})
export class WorkerModule {
  static forRoot(config: WorkerConfig, pino: Pino, handlers: HandlerMap): DynamicModule {
    const queues = { prefix: config.prefix, partitions: config.partitions };
    const tagging = parseRedisUrl(config.redisUrl).kind === 'cluster' ? 'spread' : 'plain';
    const logger = sundialLogger(pino);
    return {
      module: WorkerModule,
      imports: [
        LoggingModule.forRoot(pino),
        HealthModule.forRoot(config.redisUrl),
        // Its own app name: it declares no @DistributedCron, so it may own (and remove) no app's rows.
        SundialModule.forRoot({
          connection: config.redisUrl,
          ...queues,
          logger,
          appName: 'sundial-worker',
          commandTimeoutMs: config.commandTimeoutMs,
        }),
        SundialWorkerModule.forRoot({
          ...queues,
          tagging,
          serve: config.serve,
          handlers,
          concurrency: config.concurrency,
          leaseMs: config.leaseMs,
          consumerStallMs: config.consumerStallMs,
          claimAheadMs: config.claimAheadMs,
          dispatcherGraceMs: config.dispatcherGraceMs,
          shutdownGraceMs: config.shutdownGraceMs,
          autoStart: false,
        }),
      ],
      providers: [
        {
          provide: APP_SERVICE,
          // A stop drains: running handlers get the shutdown grace before their signals abort.
          useFactory: (worker: SundialWorker): AppService => ({
            start: () => worker.start(),
            stop: () => worker.stop(),
          }),
          inject: [SundialWorker],
        },
        AppServiceHooks,
      ],
    };
  }
}
