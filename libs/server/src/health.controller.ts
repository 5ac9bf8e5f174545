import { Controller, Get, Inject } from '@nestjs/common';
import type { HealthCheckResult, HealthIndicatorResult } from '@nestjs/terminus';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { Lifecycle } from './lifecycle';
import { RedisPing } from './redis-ping';

/**
 * terminus's `@HealthCheck()` documents the route by requiring @nestjs/swagger when it is installed
 * (why not here: below); the scheduler adds that documentation (apps/scheduler/src/openapi-probes.ts).
 * `noCache` spelled out: given any options, terminus leaves out what is not set.
 */
const NO_SWAGGER = { noCache: true, swaggerDocumentation: false };

/**
 * `/health/live`: the process answers. `/health/ready`: Redis answers PING and we are not stopping.
 * No swagger decorator here: the worker loads this file too, and @nestjs/swagger would cost it some 530
 * modules (~0.25 s CPU a start) for a document it never builds. The scheduler documents it
 * (apps/scheduler/src/openapi-probes.ts).
 */
@Controller('health')
export class HealthController {
  constructor(
    @Inject(HealthCheckService) private readonly health: HealthCheckService,
    @Inject(HealthIndicatorService) private readonly indicators: HealthIndicatorService,
    @Inject(RedisPing) private readonly redis: RedisPing,
    @Inject(Lifecycle) private readonly lifecycle: Lifecycle,
  ) {}

  @Get('live')
  @HealthCheck(NO_SWAGGER)
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  @Get('ready')
  @HealthCheck(NO_SWAGGER)
  ready(): Promise<HealthCheckResult> {
    return this.health.check([() => this.redisUp(), () => this.running()]);
  }

  private async redisUp(): Promise<HealthIndicatorResult> {
    const indicator = this.indicators.check('redis');
    try {
      await this.redis.ping();
      return indicator.up();
    } catch (error) {
      // the cause apart: the message says what an operator acts on, the cause what the connection said
      const { message, cause } = error as Error & { cause?: { message?: unknown } };
      const why = cause?.message;
      return indicator.down({ message, ...(typeof why === 'string' && { cause: why }) });
    }
  }

  private async running(): Promise<HealthIndicatorResult> {
    const indicator = this.indicators.check('lifecycle');
    const phase = this.lifecycle.phase;
    return phase === 'running' ? indicator.up({ phase }) : indicator.down({ phase });
  }
}
