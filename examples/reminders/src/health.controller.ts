import { Controller, Get, Inject } from '@nestjs/common';
import { HealthCheck, type HealthCheckResult, HealthCheckService } from '@nestjs/terminus';
import { SundialHealthIndicator } from '@sundial/client';

/** The app's own readiness, with Sundial's indicator in it. */
@Controller('health')
export class HealthController {
  constructor(
    @Inject(HealthCheckService) private readonly health: HealthCheckService,
    @Inject(SundialHealthIndicator) private readonly sundial: SundialHealthIndicator,
  ) {}

  @Get('ready')
  @HealthCheck()
  ready(): Promise<HealthCheckResult> {
    return this.health.check([() => this.sundial.isHealthy()]);
  }
}
