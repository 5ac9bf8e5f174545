import { Injectable } from '@nestjs/common';
import { HealthCheckService, TerminusModule } from '@nestjs/terminus';
import { Test } from '@nestjs/testing';
import { Registry, register } from 'prom-client';
import { type RedisServer, startRedis, waitFor } from '@sundial/testing/harness';
import {
  OnTimer,
  SundialHealthIndicator,
  SundialHealthModule,
  SundialModule,
  SundialWorkerModule,
  Timers,
} from '../index';

@Injectable()
class Ping {
  @OnTimer('ping')
  ping(): void {}
}

describe('SundialHealthIndicator and metrics in the host app', () => {
  let redis: RedisServer;
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterAll(async () => {
    await redis.stop();
  });

  it('is up in a terminus check while Redis answers and the worker runs; the runs are in the registry', async () => {
    const registry = new Registry();
    const app = await Test.createTestingModule({
      imports: [
        TerminusModule.forRoot({ logger: false }),
        SundialModule.forRoot({ connection: redis.url, prefix: 'h', metricsRegistry: registry }),
        SundialWorkerModule.forRoot({ prefix: 'h', dispatch: true, metricsRegistry: registry }),
        SundialHealthModule,
      ],
      providers: [Ping],
    }).compile();
    await app.init();
    const health = app.get(HealthCheckService);
    const sundial = app.get(SundialHealthIndicator);
    expect(await health.check([() => sundial.isHealthy()])).toMatchObject({
      status: 'ok',
      details: { sundial: { status: 'up', worker: 'running' } },
    });

    await app.get(Timers).schedule({ key: 'p', handler: 'ping', delay: 20 });
    await waitFor(
      async () => (await registry.metrics()).includes('sundial_runs_total{handler="ping",status="ok"} 1'),
      {
        what: 'the run counted',
      },
    );
    expect(await registry.metrics()).toContain('sundial_timers_scheduled_total{kind="once"} 1');
    await app.close();
  });

  // docs/spec.md §5.1: SundialWorkerModule without a `metricsRegistry` of its own counts in SundialModule's.
  // Before, its runs, lateness and sundial_fire_consumers went to prom-client's global registry, which an
  // app that had given SundialModule its own registry did not serve: its /metrics had the scheduled
  // counts and no runs, and SundialNoReadyWorker found no consumer.
  it("SundialWorkerModule counts in SundialModule's metricsRegistry unless given its own", async () => {
    const registry = new Registry();
    const app = await Test.createTestingModule({
      imports: [
        SundialModule.forRoot({ connection: redis.url, prefix: 'h3', metricsRegistry: registry }),
        SundialWorkerModule.forRoot({ prefix: 'h3', dispatch: true }),
      ],
      providers: [Ping],
    }).compile();
    await app.init();
    await app.get(Timers).schedule({ key: 'p', handler: 'ping', delay: 20 });
    const ran = 'sundial_runs_total{handler="ping",status="ok"} 1';
    await waitFor(async () => (await registry.metrics()).includes(ran), { what: 'the run counted' });
    const served = await registry.metrics();
    expect(served).toContain('sundial_timers_scheduled_total{kind="once"} 1');
    expect(served).toContain('sundial_fire_consumers{partition="0"} 1');
    expect(served).toContain('sundial_redis_up 1');
    expect(await register.metrics()).not.toContain('sundial_runs_total{');
    await app.close();
  });

  it('is down, with the reason, once the app stops', async () => {
    const app = await Test.createTestingModule({
      imports: [
        TerminusModule.forRoot({ logger: false }),
        SundialModule.forRoot({ connection: redis.url, prefix: 'h2' }),
        SundialWorkerModule.forRoot({ prefix: 'h2' }),
        SundialHealthModule,
      ],
    }).compile();
    await app.init();
    const sundial = app.get(SundialHealthIndicator);
    const health = app.get(HealthCheckService);
    await app.get(Timers).dispose();
    const failed = await health
      .check([() => sundial.isHealthy()])
      .catch((error: { response: unknown }) => error.response);
    expect(failed).toMatchObject({
      status: 'error',
      error: { sundial: { status: 'down', worker: 'running' } },
    });
    await app.close();
  });

  it('memory backend: up, without a worker', async () => {
    const app = await Test.createTestingModule({
      imports: [
        TerminusModule.forRoot({ logger: false }),
        SundialModule.forRoot({ backend: 'memory' }),
        SundialHealthModule,
      ],
    }).compile();
    await app.init();
    expect(await app.get(SundialHealthIndicator).isHealthy()).toEqual({ sundial: { status: 'up' } });
    await app.close();
  });
});
