import { Controller, Get, Inject } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import type { HealthCheckResult, HealthIndicatorResult } from '@nestjs/terminus';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { Lifecycle } from './lifecycle';
import { RedisPing } from './redis-ping';

/** `/health/live`: the process answers. `/health/ready`: Redis answers PING and we are not stopping. */
@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    @Inject(HealthCheckService) private readonly health: HealthCheckService,
    @Inject(HealthIndicatorService) private readonly indicators: HealthIndicatorService,
    @Inject(RedisPing) private readonly redis: RedisPing,
    @Inject(Lifecycle) private readonly lifecycle: Lifecycle,
  ) {}

  @Get('live')
  @HealthCheck()
  live(): Promise<HealthCheckResult> {
    return this.health.check([]);
  }

  @Get('ready')
  @HealthCheck()
  ready(): Promise<HealthCheckResult> {
    return this.health.check([() => this.redisUp(), () => this.running()]);
  }

  private async redisUp(): Promise<HealthIndicatorResult> {
    const indicator = this.indicators.check('redis');
    try {
      await this.redis.ping();
      return indicator.up();
    } catch (error) {
      return indicator.down({ message: (error as Error).message });
    }
  }

  private async running(): Promise<HealthIndicatorResult> {
    const indicator = this.indicators.check('lifecycle');
    const phase = this.lifecycle.phase;
    return phase === 'running' ? indicator.up({ phase }) : indicator.down({ phase });
  }
}
