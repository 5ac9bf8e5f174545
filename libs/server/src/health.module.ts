import type { DynamicModule, OnApplicationShutdown } from '@nestjs/common';
import { Inject, Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller';
import { Lifecycle } from './lifecycle';
import { MetricsController } from './metrics.controller';
import { RedisPing } from './redis-ping';

/** Probes and `/metrics`, the same in both apps. Exports `Lifecycle` so the app can mark its phase. */
@Module({})
export class HealthModule implements OnApplicationShutdown {
  constructor(@Inject(RedisPing) private readonly redis: RedisPing) {}

  static forRoot(redisUrl: string): DynamicModule {
    return {
      module: HealthModule,
      global: true,
      imports: [TerminusModule.forRoot({ logger: false })],
      controllers: [HealthController, MetricsController],
      providers: [Lifecycle, { provide: RedisPing, useFactory: () => new RedisPing(redisUrl) }],
      exports: [Lifecycle],
    };
  }

  onApplicationShutdown(): Promise<void> {
    return this.redis.close();
  }
}
