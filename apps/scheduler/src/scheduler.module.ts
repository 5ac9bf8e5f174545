import type { DynamicModule } from '@nestjs/common';
import { Module } from '@nestjs/common';
import { APP_BACKEND, BackendHooks } from '../../shared/src/backend-hooks';
import { HealthModule } from '../../shared/src/health.module';
import type { JsonLogger } from '../../shared/src/json-logger';
import { RegistryController } from './registry.controller';
import type { SchedulerBackend, SchedulerBackendFactory } from './scheduler-backend';
import type { SchedulerConfig } from './scheduler-config';
import { TimersController } from './timers.controller';
import { TIMERS_API } from './timers-api.token';

/** The scheduler: the HTTP API over the backend's TimersApi, plus its loops, started and stopped with Nest. */
@Module({})
export class SchedulerModule {
  static forRoot(
    config: SchedulerConfig,
    logger: JsonLogger,
    backend: SchedulerBackendFactory,
  ): DynamicModule {
    return {
      module: SchedulerModule,
      imports: [HealthModule.forRoot(config.redisUrl)],
      controllers: [TimersController, RegistryController],
      providers: [
        { provide: APP_BACKEND, useFactory: () => backend(config, logger) },
        { provide: TIMERS_API, useFactory: (b: SchedulerBackend) => b.timers, inject: [APP_BACKEND] },
        BackendHooks,
      ],
    };
  }
}
