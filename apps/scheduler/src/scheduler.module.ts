import type { DynamicModule } from '@nestjs/common';
import { Module } from '@nestjs/common';
import { APP_SERVICE, AppServiceHooks, HealthModule, type JsonLogger } from '@sundial/server';
import { RegistryController } from './registry.controller';
import type { SchedulerService, SchedulerServiceFactory } from './scheduler-service';
import type { SchedulerConfig } from './scheduler-config';
import { TimersController } from './timers.controller';
import { TIMERS_API } from './timers-api.token';

/** The scheduler: the HTTP API over the app service's TimersApi, plus its loops, started and stopped with Nest. */
@Module({})
export class SchedulerModule {
  static forRoot(
    config: SchedulerConfig,
    logger: JsonLogger,
    service: SchedulerServiceFactory,
  ): DynamicModule {
    return {
      module: SchedulerModule,
      imports: [HealthModule.forRoot(config.redisUrl)],
      controllers: [TimersController, RegistryController],
      providers: [
        { provide: APP_SERVICE, useFactory: () => service(config, logger) },
        { provide: TIMERS_API, useFactory: (b: SchedulerService) => b.timers, inject: [APP_SERVICE] },
        AppServiceHooks,
      ],
    };
  }
}
