import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { type JsonValue, SundialError } from '@sundial/core';
import { type RedisServer, startRedis } from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { DistributedCron, SundialModule, SundialWorkerModule } from './index';

@Injectable()
class Nightly {
  @DistributedCron('nightly', '0 2 * * *')
  run(_payload: JsonValue): void {}
}

/** The refusal shape of docs/spec.md §2: reason, field, message, fix. */
function refusal(field: string | undefined): unknown {
  return expect.objectContaining({
    name: 'SundialError',
    reason: 'invalid',
    field,
    message: expect.any(String),
    fix: expect.any(String),
  });
}

function caught(act: () => unknown): unknown {
  try {
    act();
  } catch (error) {
    return error;
  }
  return 'nothing thrown';
}

/**
 * Every option of SundialModule (forRoot and forRootAsync) and SundialWorkerModule that can be wrong is
 * refused at boot with the refusal shape, and the refused boot changes nothing in Redis: the app's
 * `@DistributedCron` row, which a boot writes, is not there.
 */
describe('module options', () => {
  let redis: RedisServer;
  let client: Redis;
  /** an app's own client, made for its keys */
  let prefixed: Redis;
  beforeAll(async () => {
    redis = await startRedis();
    client = new Redis(redis.url);
    prefixed = new Redis(redis.url, { keyPrefix: 'myapp:', lazyConnect: true });
  });
  afterAll(async () => {
    client.disconnect();
    prefixed.disconnect();
    await redis.stop();
  });

  async function boot(sundial: ReturnType<typeof SundialModule.forRoot>): Promise<unknown> {
    @Module({ imports: [sundial], providers: [Nightly] })
    class App {}
    const app = await NestFactory.createApplicationContext(App, { logger: false, abortOnError: false });
    await app.close();
    return 'booted';
  }

  const url = () => redis.url;
  it.each([
    ['connection', () => ({ prefix: 'bad' })],
    ['connection', () => ({ connection: 42 })],
    ['connection', () => ({ connection: 'http://127.0.0.1:1' })],
    ['prefix', () => ({ connection: url(), prefix: '' })],
    ['prefix', () => ({ connection: url(), prefix: 'a{b}' })],
    ['partitions', () => ({ connection: url(), prefix: 'bad', partitions: 0 })],
    ['partitions', () => ({ connection: url(), prefix: 'bad', partitions: 1.5 })],
    ['partitions', () => ({ connection: url(), prefix: 'bad', partitions: 1025 })],
    ['tombstoneMs', () => ({ connection: url(), prefix: 'bad', tombstoneMs: -1 })],
    ['ledger', () => ({ connection: url(), prefix: 'bad', ledger: 5000 })],
    ['limits', () => ({ connection: url(), prefix: 'bad', limits: 5 })],
    ['limits.minEveryMs', () => ({ connection: url(), prefix: 'bad', limits: { minEveryMs: 0 } })],
    ['limits.maxPayload', () => ({ connection: url(), prefix: 'bad', limits: { maxPayload: 10 } })],
    ['logger', () => ({ connection: url(), prefix: 'bad', logger: console.log })],
    ['appName', () => ({ connection: url(), prefix: 'bad', appName: '' })],
    ['metricsRegistry', () => ({ connection: url(), prefix: 'bad', metricsRegistry: {} })],
    ['startWaitMs', () => ({ connection: url(), prefix: 'bad', startWaitMs: -1 })],
    ['startWaitMs', () => ({ connection: url(), prefix: 'bad', startWaitMs: '5s' })],
    ['startWaitMs', () => ({ backend: 'memory', startWaitMs: 1000 })],
    ['cronRefreshMs', () => ({ connection: url(), prefix: 'bad', cronRefreshMs: 50 })],
    // past Node's longest timer (2^31−1 ms) a timer fires after 1 ms
    ['cronRefreshMs', () => ({ connection: url(), prefix: 'bad', cronRefreshMs: 2 ** 31 })],
    ['startWaitMs', () => ({ connection: url(), prefix: 'bad', startWaitMs: 2 ** 31 })],
    ['cronRefreshMs', () => ({ backend: 'memory', cronRefreshMs: 1000 })],
    ['tombstonems', () => ({ connection: url(), prefix: 'bad', tombstonems: 1000 })],
    ['backend', () => ({ backend: 'memroy' })],
    ['clock', () => ({ backend: 'memory', clock: { now: () => 0 } })],
    ['handlers.remind', () => ({ backend: 'memory', handlers: { remind: 'yes' } })],
    ['connection', () => ({ backend: 'memory', connection: url() })],
    // the timers went to myapp:sundial:…, where the dispatchers never look; BullMQ refused it in its words
    ['connection.keyPrefix', () => ({ connection: { url: url(), keyPrefix: 'myapp:' } })],
    ['connection.keyPrefix', () => ({ connection: prefixed })],
  ])(
    'SundialModule refuses a wrong %s at boot, in forRoot and forRootAsync, and writes nothing',
    async (field, options) => {
      const given = options() as Parameters<typeof SundialModule.forRoot>[0];
      await expect(boot(SundialModule.forRoot(given))).rejects.toEqual(refusal(field));
      await expect(boot(SundialModule.forRootAsync({ useFactory: () => given }))).rejects.toEqual(
        refusal(field),
      );
      expect(await client.dbsize()).toBe(0);
    },
  );

  it('SundialModule.forRootAsync: a connection read from an unset variable is said as missing, the fix naming getOrThrow', async () => {
    const unset = SundialModule.forRootAsync({
      useFactory: () => ({ connection: process.env.SUNDIAL_NOT_SET as string }),
    });
    // Before: "SundialModule: connection undefined is missing."
    await expect(boot(unset)).rejects.toMatchObject({
      reason: 'invalid',
      field: 'connection',
      message: 'SundialModule: connection is missing (undefined).',
      fix: expect.stringContaining(
        'a ConfigService.get of an unset variable (REDIS_URL?) gives undefined, where getOrThrow names it',
      ),
    });
  });

  it('SundialModule.forRootAsync refuses a factory that gives no options object', async () => {
    const nothing = SundialModule.forRootAsync({ useFactory: () => null as never });
    await expect(boot(nothing)).rejects.toEqual(refusal(undefined));
  });

  it('SundialModule boots with right options, and its boot writes the cron row', async () => {
    expect(await boot(SundialModule.forRoot({ connection: url(), prefix: 'good', tombstoneMs: 0 }))).toBe(
      'booted',
    );
    expect(await client.keys('good:*')).toContainEqual(expect.stringContaining('cron:nightly'));
    await client.flushdb();
  });

  it.each([
    ['prefix', { prefix: 'a}' }],
    ['partitions', { partitions: 0 }],
    ['serve', { partitions: 2, serve: '0' }],
    ['serve', { partitions: 2, serve: [2] }],
    ['tagging', { tagging: 'sprad' }],
    ['configKey', { configKey: '' }],
    ['concurrency', { concurrency: 0 }],
    ['leaseMs', { leaseMs: 50 }],
    ['leaseMs', { leaseMs: 2 ** 31 }], // past Node's longest timer: BullMQ's lock renewed every ms
    ['claimAheadMs', { claimAheadMs: 51 }],
    ['claimAheadMs', { claimAheadMs: -1 }],
    ['consumerStallMs', { consumerStallMs: '30s' }],
    ['consumerStallMs', { consumerStallMs: 2 ** 32 * 3 }],
    ['dispatcherGraceMs', { dispatcherGraceMs: 299 }],
    ['dispatcherGraceMs', { dispatcherGraceMs: '15s' }],
    ['shutdownGraceMs', { shutdownGraceMs: -1 }],
    ['handlers', { handlers: [] }],
    ['dispatch', { dispatch: 'yes' }],
    ['reconcileMs', { reconcileMs: 2.5 }],
    ['reconcileMs', { reconcileMs: 2 ** 31 }],
    ['autoStart', { autoStart: 1 }],
    ['metricsRegistry', { metricsRegistry: new Map() }],
    ['concurency', { concurency: 4 }],
  ])('SundialWorkerModule.forRoot refuses a wrong %s when the module is defined', (field, options) => {
    const given = options as Parameters<typeof SundialWorkerModule.forRoot>[0];
    const error = caught(() => SundialWorkerModule.forRoot(given));
    expect(error).toBeInstanceOf(SundialError);
    expect(error).toEqual(refusal(field));
  });

  it("SundialWorkerModule.forRoot takes the runner's dispatcherGraceMs (docs/spec.md §4.2), its words for one too short", () => {
    expect(() => SundialWorkerModule.forRoot({ dispatcherGraceMs: 300 })).not.toThrow();
    expect(caught(() => SundialWorkerModule.forRoot({ dispatcherGraceMs: 299 }))).toMatchObject({
      reason: 'invalid',
      field: 'dispatcherGraceMs',
      message: expect.stringContaining('dispatcherGraceMs 299 is not an integer of at least 300'),
      fix: 'Write dispatcherGraceMs as an integer of at least 300, or leave it out for the default (15000).',
    });
  });
});
