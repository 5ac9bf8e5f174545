import { Controller, Get, Header } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { collectDefaultMetrics, register } from 'prom-client';

/** Prometheus exposition of the process-wide registry, where the libs register their metrics. */
@ApiExcludeController()
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
