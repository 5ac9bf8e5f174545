import type { BeforeApplicationShutdown, DynamicModule, OnApplicationBootstrap } from '@nestjs/common';
import { Inject, Module } from '@nestjs/common';
import { HealthModule } from '../../shared/src/health.module';
import type { JsonLogger } from '../../shared/src/json-logger';
import { Lifecycle } from '../../shared/src/lifecycle';
import { API_TOKEN } from './api-token.guard';
import { RegistryController } from './registry.controller';
import type { SchedulerBackend, SchedulerBackendFactory } from './scheduler-backend';
import type { SchedulerConfig } from './scheduler-config';
import { TimersController } from './timers.controller';
import { TIMERS_API } from './timers-api.token';

const BACKEND = Symbol('SchedulerBackend');

/** The scheduler: the HTTP API over the backend's TimersApi, plus its loops, started and stopped with Nest. */
@Module({})
export class SchedulerModule implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    @Inject(BACKEND) private readonly backend: SchedulerBackend,
    @Inject(Lifecycle) private readonly lifecycle: Lifecycle,
  ) {}

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
        { provide: BACKEND, useFactory: () => backend(config, logger) },
        { provide: TIMERS_API, useFactory: (b: SchedulerBackend) => b.timers, inject: [BACKEND] },
        { provide: API_TOKEN, useValue: config.apiToken ?? null },
      ],
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.backend.start();
    this.lifecycle.markRunning();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.lifecycle.markStopping();
    await this.backend.stop();
  }
}
