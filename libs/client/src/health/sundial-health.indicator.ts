import { Inject, Injectable } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { type HealthIndicatorResult, HealthIndicatorService } from '@nestjs/terminus';
import { Timers } from '../timers';
import { SundialWorker } from '../worker/sundial-worker';

const PROBE_TIMEOUT_MS = 1000;

/**
 * Sundial in the host app's `/health` (@nestjs/terminus, on its `HealthIndicatorService`): up when the
 * backend answers a read within 1 s and, in an app running `SundialWorkerModule`, its worker takes fire
 * jobs. `health.check([() => sundial.isHealthy()])`.
 */
@Injectable()
export class SundialHealthIndicator {
  constructor(
    @Inject(HealthIndicatorService) private readonly indicators: HealthIndicatorService,
    @Inject(Timers) private readonly timers: Timers,
    @Inject(ModuleRef) private readonly moduleRef: ModuleRef,
  ) {}

  /** The app's worker, wherever SundialWorkerModule was imported (it need not be global). */
  private worker(): SundialWorker | undefined {
    try {
      return this.moduleRef.get(SundialWorker, { strict: false });
    } catch {
      return undefined;
    }
  }

  async isHealthy(key = 'sundial'): Promise<HealthIndicatorResult> {
    const indicator = this.indicators.check(key);
    const worker = this.worker()?.state;
    try {
      // One read (an id lookup) through the same client and error handling as every call.
      await withTimeout(this.timers.check('0p0'), PROBE_TIMEOUT_MS);
    } catch (error) {
      return indicator.down({ message: (error as Error).message, ...(worker && { worker }) });
    }
    if (worker !== undefined && worker !== 'running') return indicator.down({ worker });
    return indicator.up(worker ? { worker } : {});
  }
}

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Sundial's backend did not answer within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
