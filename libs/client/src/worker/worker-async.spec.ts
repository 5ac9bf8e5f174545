import { Injectable, Module } from '@nestjs/common';
import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { Test, type TestingModule } from '@nestjs/testing';
import type { ModuleMetadata } from '@nestjs/common';
import { type JsonValue, SundialError } from '@sundial/core';
import type { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { SundialKeys } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { nestAppsOnRedis } from '../../../../test/client/nest-apps-on-redis';
import {
  OnTimer,
  SundialModule,
  SundialWorkerModule,
  type SundialWorkerModuleFactoryOptions,
  type SundialWorkerOptionsFactory,
  Timers,
} from '../index';
import type { FireProcessor } from './fire-processor';
import { FIRE_PROCESSORS } from './sundial-worker';

@Injectable()
class Pings {
  readonly seen: JsonValue[] = [];
  @OnTimer('ping')
  ping(payload: JsonValue): void {
    this.seen.push(payload);
  }
}

@Injectable()
class WorkerConfig implements SundialWorkerOptionsFactory {
  createSundialWorkerOptions(): SundialWorkerModuleFactoryOptions {
    return { concurrency: 3, leaseMs: 2000, dispatch: true };
  }
}

@Module({ providers: [WorkerConfig], exports: [WorkerConfig] })
class WorkerConfigModule {}

describe('SundialWorkerModule.forRootAsync, refusals at boot, the fire queues’ BullModule config', () => {
  const suite = nestAppsOnRedis();
  let n = 0;

  async function boot(imports: ModuleMetadata['imports']): Promise<TestingModule> {
    const app = await Test.createTestingModule({ imports, providers: [Pings] }).compile();
    suite.apps.push(app);
    await app.init();
    return app;
  }

  /** The partition-0 BullMQ Worker @nestjs/bullmq made, and that a timer runs through the app's handler. */
  async function workerOf(app: TestingModule): Promise<FireProcessor['worker']> {
    await app.get(Timers).schedule({ key: `ping:${n}`, handler: 'ping', payload: n, delay: 20 });
    await waitFor(() => app.get(Pings).seen.length > 0, { what: 'the @OnTimer run' });
    return app.get<FireProcessor[]>(FIRE_PROCESSORS)[0].worker;
  }

  it('useFactory with ConfigService: concurrency and leaseMs reach the BullMQ Worker', async () => {
    const p = `a${n++}`;
    const app = await boot([
      ConfigModule.forRoot({ ignoreEnvFile: true, load: [() => ({ CONCURRENCY: '5', LEASE_MS: '4000' })] }),
      SundialModule.forRoot({ connection: suite.redis.url, prefix: p }),
      SundialWorkerModule.forRootAsync({
        prefix: p,
        imports: [ConfigModule],
        inject: [ConfigService],
        useFactory: (config: ConfigService) => ({
          concurrency: Number(config.getOrThrow<string>('CONCURRENCY')),
          leaseMs: Number(config.getOrThrow<string>('LEASE_MS')),
          dispatch: true,
        }),
      }),
    ]);
    const worker = await workerOf(app);
    expect(worker.concurrency).toBe(5);
    expect(worker.opts).toMatchObject({ lockDuration: 8000, stalledInterval: 4000, autorun: false });
  });

  it.each([
    ['useClass', { useClass: WorkerConfig }],
    ['useExisting', { imports: [WorkerConfigModule], useExisting: WorkerConfig }],
  ])('%s: the options class gives the options', async (_, way) => {
    const p = `b${n++}`;
    const app = await boot([
      SundialModule.forRoot({ connection: suite.redis.url, prefix: p }),
      SundialWorkerModule.forRootAsync({ prefix: p, ...way }),
    ]);
    const worker = await workerOf(app);
    expect(worker.concurrency).toBe(3);
    expect(worker.opts).toMatchObject({ lockDuration: 4000, stalledInterval: 2000 });
  });

  it('refuses a bad factory option at boot: reason invalid, field, fix (as forRoot)', async () => {
    const refused = await boot([
      SundialModule.forRoot({ connection: suite.redis.url, prefix: 'c' }),
      SundialWorkerModule.forRootAsync({ prefix: 'c', useFactory: () => ({ concurrency: 0 }) }),
    ]).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SundialError);
    expect(refused).toMatchObject({ reason: 'invalid', field: 'concurrency' });
    expect((refused as SundialError).fix).toBeTruthy();
  });

  it('refuses a queue-identity option from the factory, and no or two ways to the options', async () => {
    const refused = await boot([
      SundialModule.forRoot({ connection: suite.redis.url, prefix: 'd' }),
      SundialWorkerModule.forRootAsync({
        useFactory: () => ({ prefix: 'd' }) as SundialWorkerModuleFactoryOptions,
      }),
    ]).catch((error: unknown) => error);
    expect(refused).toMatchObject({ reason: 'invalid', field: 'prefix' });
    const beside = { useFactory: () => ({}), concurrency: 4 } as Parameters<
      typeof SundialWorkerModule.forRootAsync
    >[0];
    expect(() => SundialWorkerModule.forRootAsync(beside)).toThrow(
      expect.objectContaining({ reason: 'invalid', field: 'concurrency' }) as Error,
    );
    expect(() => SundialWorkerModule.forRootAsync({})).toThrow(
      expect.objectContaining({ reason: 'invalid', field: 'useFactory' }) as Error,
    );
    expect(() =>
      SundialWorkerModule.forRootAsync({ useFactory: () => ({}), useClass: WorkerConfig }),
    ).toThrow(expect.objectContaining({ reason: 'invalid', field: 'useFactory' }) as Error);
  });

  /** The connections Redis lists under `name`, once a connection opened after the boot's is listed. */
  async function named(name: string): Promise<number> {
    const control = new Redis(suite.redis.url, { connectionName: `${name}-control` });
    await control.ping();
    const list = String(await suite.probe.client('LIST')).split('\n');
    await control.quit();
    return list.filter((line) => line.includes(` name=${name} `)).length;
  }

  it.each([
    [
      'forRoot: a prefix other than SundialModule’s',
      (p: string) => SundialWorkerModule.forRoot({ prefix: `${p}x` }),
    ],
    [
      'forRootAsync: a factory option refused',
      (p: string) => SundialWorkerModule.forRootAsync({ prefix: p, useFactory: () => ({ leaseMs: -1 }) }),
    ],
    [
      'forRootAsync: the factory throws',
      (p: string) =>
        SundialWorkerModule.forRootAsync({
          prefix: p,
          imports: [ConfigModule.forRoot({ ignoreEnvFile: true })],
          inject: [ConfigService],
          useFactory: (config: ConfigService) => ({ leaseMs: config.getOrThrow<number>('UNSET_LEASE_MS') }),
        }),
    ],
    [
      'a configKey no BullModule.forRoot registers',
      (p: string) => SundialWorkerModule.forRoot({ prefix: p, configKey: 'typo' }),
    ],
  ])('a boot the worker module refuses (%s) closes SundialModule’s Redis connection', async (_, worker) => {
    // Nest calls no shutdown hook when a provider fails to be created: RedisTimers' connection,
    // opened as SundialModule's Timers was created, stayed open and kept the process alive.
    const p = `e${n++}`;
    const name = `sundial-${p}`;
    const refused = await Test.createTestingModule({
      imports: [
        SundialModule.forRoot({ connection: { url: suite.redis.url, connectionName: name }, prefix: p }),
        worker(p),
      ],
    })
      .compile()
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Error);
    await waitFor(async () => (await named(name)) === 0, { what: 'the connection to close' });
  });

  it("without configKey, the app's unnamed BullModule.forRoot config stays out of the fire queues", async () => {
    // @nestjs/bullmq merges the unnamed config into every queue registered without a configKey: the
    // app's telemetry traced Sundial's fire workers, its streams.events.maxLen was written to the fire
    // queues' meta, its defaultJobOptions were the fire queues'.
    const p = `f${n++}`;
    const telemetry = { tracer: { startSpan: () => undefined }, contextManager: {} };
    const app = await boot([
      BullModule.forRoot({
        connection: { url: suite.redis.url },
        prefix: 'users',
        telemetry: telemetry as never,
        defaultJobOptions: { attempts: 5, removeOnComplete: true },
        streams: { events: { maxLen: 7 } },
      }),
      SundialModule.forRoot({ connection: suite.redis.url, prefix: p }),
      SundialWorkerModule.forRoot({ prefix: p, dispatch: true }),
    ]);
    const keys = new SundialKeys(p, 1);
    const queue = app.get<Queue>(getQueueToken(keys.queueName(0)));
    expect(queue.opts.telemetry).toBeUndefined();
    expect(queue.opts.prefix).toBe(keys.bullPrefix);
    expect(queue.defaultJobOptions).not.toHaveProperty('attempts');
    await queue.waitUntilReady();
    const meta = `${keys.bullPrefix}:${keys.queueName(0)}:meta`;
    await waitFor(async () => (await suite.probe.hget(meta, 'opts.maxLenEvents')) !== null, {
      what: 'the meta',
    });
    expect(await suite.probe.hget(meta, 'opts.maxLenEvents')).toBe('10000');
    const worker = await workerOf(app);
    expect(worker.opts.telemetry).toBeUndefined();
  });
});
