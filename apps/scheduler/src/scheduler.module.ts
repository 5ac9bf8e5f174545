import type { DynamicModule } from '@nestjs/common';
import { Module } from '@nestjs/common';
import type { SundialLogger } from '@sundial/core';
import { APP_SERVICE, AppServiceHooks, HealthModule, LoggingModule, SUNDIAL_LOGGER } from '@sundial/server';
import type { Logger as Pino } from 'pino';
import { ExplainController } from './explain.controller';
import { RegistryController } from './registry.controller';
import type { SchedulerService, SchedulerServiceFactory } from './scheduler-service';
import type { SchedulerConfig } from './scheduler-config';
import { TimersController } from './timers.controller';
import { TIMERS_API } from './timers-api.token';

/** The scheduler: the HTTP API over the app service's TimersApi, plus its loops, started and stopped with Nest. */
@Module({})
export class SchedulerModule {
  static forRoot(config: SchedulerConfig, pino: Pino, service: SchedulerServiceFactory): DynamicModule {
    return {
      module: SchedulerModule,
      imports: [LoggingModule.forRoot(pino), HealthModule.forRoot(config.redisUrl)],
      controllers: [TimersController, ExplainController, RegistryController],
      providers: [
        {
          provide: APP_SERVICE,
          useFactory: (logger: SundialLogger) => service(config, logger),
          inject: [SUNDIAL_LOGGER],
        },
        { provide: TIMERS_API, useFactory: (b: SchedulerService) => b.timers, inject: [APP_SERVICE] },
        AppServiceHooks,
      ],
    };
  }
}
