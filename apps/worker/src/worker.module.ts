import type { DynamicModule } from '@nestjs/common';
import { Module } from '@nestjs/common';
import type { SundialLogger } from '@sundial/core';
import {
  APP_SERVICE,
  type AppService,
  AppServiceHooks,
  HealthModule,
  LoggingModule,
  SUNDIAL_LOGGER,
} from '@sundial/server';
import type { Logger as Pino } from 'pino';
import type { HandlerMap, WorkerServiceFactory } from './worker-service';
import type { WorkerConfig } from './worker-config';

/** The worker: job consumers started and drained with Nest, plus /health and /metrics. */
@Module({})
export class WorkerModule {
  static forRoot(
    config: WorkerConfig,
    pino: Pino,
    handlers: HandlerMap,
    service: WorkerServiceFactory,
  ): DynamicModule {
    return {
      module: WorkerModule,
      imports: [LoggingModule.forRoot(pino), HealthModule.forRoot(config.redisUrl)],
      providers: [
        {
          provide: APP_SERVICE,
          inject: [SUNDIAL_LOGGER],
          useFactory: (logger: SundialLogger): AppService => {
            const consumers = service(config, handlers, logger);
            // A stop drains: running handlers get the shutdown grace before their signals abort.
            return { start: () => consumers.start(), stop: () => consumers.stop(config.shutdownGraceMs) };
          },
        },
        AppServiceHooks,
      ],
    };
  }
}
