import type { DynamicModule } from '@nestjs/common';
import { Module } from '@nestjs/common';
import type { AppBackend } from '../../shared/src/backend-hooks';
import { APP_BACKEND, BackendHooks } from '../../shared/src/backend-hooks';
import { HealthModule } from '../../shared/src/health.module';
import type { JsonLogger } from '../../shared/src/json-logger';
import type { HandlerMap, WorkerBackendFactory } from './worker-backend';
import type { WorkerConfig } from './worker-config';

/** The worker: job consumers started and drained with Nest, plus /health and /metrics. */
@Module({})
export class WorkerModule {
  static forRoot(
    config: WorkerConfig,
    logger: JsonLogger,
    handlers: HandlerMap,
    backend: WorkerBackendFactory,
  ): DynamicModule {
    return {
      module: WorkerModule,
      imports: [HealthModule.forRoot(config.redisUrl)],
      providers: [
        {
          provide: APP_BACKEND,
          useFactory: (): AppBackend => {
            const consumers = backend(config, handlers, logger);
            // A stop drains: running handlers get the shutdown grace before their signals abort.
            return { start: () => consumers.start(), stop: () => consumers.stop(config.shutdownGraceMs) };
          },
        },
        BackendHooks,
      ],
    };
  }
}
