import type { DynamicModule } from '@nestjs/common';
import { Module } from '@nestjs/common';
import {
  APP_SERVICE,
  type AppService,
  AppServiceHooks,
  HealthModule,
  type JsonLogger,
} from '@sundial/server';
import type { HandlerMap, WorkerServiceFactory } from './worker-service';
import type { WorkerConfig } from './worker-config';

/** The worker: job consumers started and drained with Nest, plus /health and /metrics. */
@Module({})
export class WorkerModule {
  static forRoot(
    config: WorkerConfig,
    logger: JsonLogger,
    handlers: HandlerMap,
    service: WorkerServiceFactory,
  ): DynamicModule {
    return {
      module: WorkerModule,
      imports: [HealthModule.forRoot(config.redisUrl)],
      providers: [
        {
          provide: APP_SERVICE,
          useFactory: (): AppService => {
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
