import type { BeforeApplicationShutdown, DynamicModule, OnApplicationBootstrap } from '@nestjs/common';
import { Inject, Module } from '@nestjs/common';
import { HealthModule } from '../../shared/src/health.module';
import type { JsonLogger } from '../../shared/src/json-logger';
import { Lifecycle } from '../../shared/src/lifecycle';
import type { HandlerMap, WorkerBackend, WorkerBackendFactory } from './worker-backend';
import type { WorkerConfig } from './worker-config';

const BACKEND = Symbol('WorkerBackend');
const GRACE_MS = Symbol('ShutdownGraceMs');

/** The worker: job consumers started and drained with Nest, plus /health and /metrics. */
@Module({})
export class WorkerModule implements OnApplicationBootstrap, BeforeApplicationShutdown {
  constructor(
    @Inject(BACKEND) private readonly backend: WorkerBackend,
    @Inject(GRACE_MS) private readonly graceMs: number,
    @Inject(Lifecycle) private readonly lifecycle: Lifecycle,
  ) {}

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
        { provide: BACKEND, useFactory: () => backend(config, handlers, logger) },
        { provide: GRACE_MS, useValue: config.shutdownGraceMs },
      ],
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.backend.start();
    this.lifecycle.markRunning();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.lifecycle.markStopping();
    await this.backend.stop(this.graceMs);
  }
}
