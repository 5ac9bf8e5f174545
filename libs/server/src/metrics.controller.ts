import { Controller, Get, Header } from '@nestjs/common';
import { collectDefaultMetrics, register } from 'prom-client';

/**
 * Prometheus exposition of the process-wide registry, where the libs register their metrics. Left out
 * of the scheduler's OpenAPI document by apps/scheduler/src/openapi-probes.ts, not by a decorator here
 * (why: health.controller.ts).
 */
@Controller('metrics')
export class MetricsController {
  constructor() {
    // Process metrics once per process (several apps share one process in tests).
    if (!register.getSingleMetric('process_cpu_user_seconds_total')) collectDefaultMetrics();
  }

  @Get()
  @Header('Content-Type', register.contentType)
  metrics(): Promise<string> {
    return register.metrics();
  }
}
