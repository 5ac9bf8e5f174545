import { Injectable, type ModuleMetadata } from '@nestjs/common';
import { BullModule, getQueueToken } from '@nestjs/bullmq';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { Test, type TestingModule } from '@nestjs/testing';
import { type JsonValue, type LogFields, silentLogger, type TimerContext } from '@sundial/core';
import { Queue, type RedisQueueBackend } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { Registry } from 'prom-client';
import { type RedisConnection, SundialKeys } from '@sundial/redis';
import { type RedisServer, startRedis, waitFor } from '@sundial/testing/harness';
import { OnTimer, SundialModule, SundialWorker, SundialWorkerModule, Timers } from '../index';
import type { FireProcessor } from './fire-processor';
import { FIRE_LOOPS, FIRE_PROCESSORS, type FireLoops } from './sundial-worker';

@Injectable()
class Greeter {
  greet(name: string): string {
    return `hello ${name}`;
  }
}

interface Seen {
  greeting: string;
  ctx: Pick<TimerContext, 'key' | 'version' | 'due'>;
  signal: boolean;
}

@Injectable()
class Reminders {
  readonly seen: Seen[] = [];
  constructor(private readonly greeter: Greeter) {}

  @OnTimer('greet')
  greet(payload: JsonValue, ctx: TimerContext): void {
    const { key, version, due } = ctx;
    this.seen.push({
      greeting: this.greeter.greet(payload as string),
      ctx: { key, version, due },
      signal: ctx.signal instanceof AbortSignal && !ctx.signal.aborted,
    });
  }
}

describe('SundialWorkerModule (Redis, handlers in the app over @nestjs/bullmq)', () => {
  let redis: RedisServer;
  let prefix = 0;
  const apps: TestingModule[] = [];
  beforeAll(async () => {
    redis = await startRedis();
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });
  afterAll(async () => {
    await redis.stop();
  });

  /** Boots an app, schedules a timer for `greet` and waits for the @OnTimer method to run it. */
  async function firesThrough(imports: ModuleMetadata['imports']): Promise<TestingModule> {
    const app = await Test.createTestingModule({ imports, providers: [Greeter, Reminders] }).compile();
    apps.push(app);
    await app.init();
    const timer = await app
      .get(Timers)
      .schedule({ key: 'greet:1', handler: 'greet', payload: 'ada', delay: 50 });
    const reminders = app.get(Reminders);
    await waitFor(() => reminders.seen.length > 0, { what: 'the @OnTimer run' });
    expect(reminders.seen).toEqual([
      { greeting: 'hello ada', ctx: { key: 'greet:1', version: 1, due: timer.dueAt }, signal: true },
    ]);
    await waitFor(async () => (await app.get(Timers).get('greet:1')) === null, { what: 'the completion' });
    return app;
  }

  it('forRoot: a URL connection, the dispatcher in the app', async () => {
    const p = `w${prefix++}`;
    const app = await firesThrough([
      SundialModule.forRoot({ connection: redis.url, prefix: p }),
      SundialWorkerModule.forRoot({ prefix: p, dispatch: true }),
    ]);
    await app.close();
  });

  it('forRootAsync: the connection from ConfigService', async () => {
    const p = `w${prefix++}`;
    const app = await firesThrough([
      ConfigModule.forRoot({ ignoreEnvFile: true, load: [() => ({ REDIS_URL: redis.url })] }),
      SundialModule.forRootAsync({
        imports: [ConfigModule],
        inject: [ConfigService],
        useFactory: (config: ConfigService) => ({
          connection: config.getOrThrow<string>('REDIS_URL'),
          prefix: p,
        }),
      }),
      SundialWorkerModule.forRoot({ prefix: p, dispatch: true }),
    ]);
    await app.close();
  });

  it("a shared BullModule.forRoot(configKey) connection is the fire queues' connection", async () => {
    const p = `w${prefix++}`;
    const app = await firesThrough([
      BullModule.forRoot('jobs', { connection: { url: redis.url, connectionName: 'users-bull' } }),
      SundialModule.forRoot({ connection: redis.url, prefix: p }),
      SundialWorkerModule.forRoot({ prefix: p, configKey: 'jobs', dispatch: true }),
    ]);
    // The fire queue and its BullMQ worker, made by @nestjs/bullmq, connect with the user's options.
    const probe = new Redis(redis.url);
    expect(String(await probe.client('LIST'))).toContain('name=users-bull ');
    await probe.quit();
    await app.close();
  });

  it('refuses a configKey connection that reaches another database than SundialModule’s', async () => {
    // Its workers would wait on an empty queue while the fire jobs pile up where the dispatcher adds them.
    const p = `w${prefix++}`;
    const app = await Test.createTestingModule({
      imports: [
        BullModule.forRoot('elsewhere', { connection: { url: `${redis.url}/3` } }),
        SundialModule.forRoot({ connection: redis.url, prefix: p }),
        SundialWorkerModule.forRoot({ prefix: p, configKey: 'elsewhere' }),
      ],
    }).compile();
    apps.push(app);
    await expect(app.init()).rejects.toMatchObject({ reason: 'invalid', field: 'configKey' });
  });

  it('an existing ioredis client: duplicated, never closed by Sundial', async () => {
    const p = `w${prefix++}`;
    const client = new Redis(redis.url);
    const app = await firesThrough([
      SundialModule.forRoot({ connection: client, prefix: p }),
      SundialWorkerModule.forRoot({ prefix: p, dispatch: true }),
    ]);
    await app.close();
    expect(await client.ping()).toBe('PONG');
    await client.quit();
  });

  describe("the fire queues' and workers' reconnect strategy (waits between attempts: the 5th's)", () => {
    /** The 5th wait of the partition queue's connection and of its worker's blocking connection. */
    async function fifthWaits(imports: ModuleMetadata['imports'], p: string): Promise<number[]> {
      const app = await Test.createTestingModule({ imports }).compile();
      apps.push(app);
      await app.init();
      const queue = app.get<Queue>(getQueueToken(new SundialKeys(p, 1).queueName(0)));
      const [processor] = app.get<FireProcessor[]>(FIRE_PROCESSORS);
      const backend = processor.worker.getBackend() as RedisQueueBackend;
      const clients = [await queue.getBackend().client, await backend.blockingClient!];
      return clients.map((client) => (client.options as RedisOptions).retryStrategy!(5) as number);
    }
    const worker = (p: string, connection: RedisConnection) => [
      SundialModule.forRoot({ connection, prefix: p }),
      SundialWorkerModule.forRoot({ prefix: p }),
    ];

    it.each([
      ['a URL', (url: string) => url],
      ['options', (url: string) => ({ host: '127.0.0.1', port: Number(new URL(url).port) })],
      ['{ url, ...options }', (url: string) => ({ url, connectionName: 'app' })],
    ])("made from %s: Sundial's (50 ms × attempt), not BullMQ's back-off (1 s)", async (_, given) => {
      const p = `w${prefix++}`;
      expect(await fifthWaits(worker(p, given(redis.url)), p)).toEqual([250, 250]);
    });

    it('options or a client naming their own: theirs', async () => {
      const p = `w${prefix++}`;
      const options = { url: redis.url, retryStrategy: () => 123 };
      expect(await fifthWaits(worker(p, options), p)).toEqual([123, 123]);
      const q = `w${prefix++}`;
      const client = new Redis(redis.url, { retryStrategy: () => 321 });
      expect(await fifthWaits(worker(q, client), q)).toEqual([321, 321]);
      await Promise.all(apps.splice(0).map((app) => app.close()));
      await client.quit();
    });

    it("a shared BullModule connection: the user's, with BullMQ's back-off when it names none", async () => {
      const p = `w${prefix++}`;
      const imports = [
        BullModule.forRoot('jobs', { connection: { url: redis.url } }),
        SundialModule.forRoot({ connection: redis.url, prefix: p }),
        SundialWorkerModule.forRoot({ prefix: p, configKey: 'jobs' }),
      ];
      expect(await fifthWaits(imports, p)).toEqual([1_000, 1_000]);
    });
  });

  it('serve: runs only the timers of the partitions it serves', async () => {
    const p = `w${prefix++}`;
    const keys = new SundialKeys(p, 2);
    const [mine, theirs] = [0, 1].map((n) =>
      ['a', 'b', 'c', 'd'].find((key) => keys.partitionOf(key) === n)!,
    );
    const app = await Test.createTestingModule({
      imports: [
        SundialModule.forRoot({ connection: redis.url, prefix: p, partitions: 2 }),
        SundialWorkerModule.forRoot({ prefix: p, partitions: 2, serve: [0], dispatch: true }),
      ],
      providers: [Greeter, Reminders],
    }).compile();
    apps.push(app);
    await app.init();
    const timers = app.get(Timers);
    for (const key of [theirs, mine])
      await timers.schedule({ key, handler: 'greet', payload: key, delay: 0 });
    await waitFor(async () => (await timers.get(mine)) === null, { what: 'the run of partition 0' });
    // Both were due at once: partition 1's is left to a process that serves it.
    expect(app.get(Reminders).seen.map((seen) => seen.ctx.key)).toEqual([mine]);
    expect(await timers.get(theirs)).toMatchObject({ status: 'pending', runCount: 0 });
  });

  it('dispatcherGraceMs reaches the runner: with no dispatcher it warns past it, worded for a Nest app', async () => {
    const p = `w${prefix++}`;
    const warned: { message: string; fields: LogFields; at: number }[] = [];
    const logger = {
      ...silentLogger,
      warn: (message: string, fields: LogFields = {}) => warned.push({ message, fields, at: Date.now() }),
    };
    const app = await Test.createTestingModule({
      imports: [
        SundialModule.forRoot({ connection: redis.url, prefix: p, logger }),
        SundialWorkerModule.forRoot({ prefix: p, dispatcherGraceMs: 600 }),
      ],
    }).compile();
    apps.push(app);
    const startedAt = Date.now();
    await app.init();
    // Under the default grace (15 s) this deadline passes with nothing said.
    const [line] = await waitFor(() => warned.length > 0 && warned, { what: 'the warn line' });
    expect(line.at - startedAt).toBeGreaterThanOrEqual(600);
    expect(line.message).toBe(
      `No Sundial dispatcher has run for prefix '${p}' for 15 s: due timers stay pending and reach no worker until one runs`,
    );
    expect(line.fields.fix).toBe(
      `Deploy the scheduler (apps/scheduler, at least one replica) with SUNDIAL_PREFIX=${p}, or in an app of this prefix pass dispatch: true to SundialWorkerModule.forRoot.`,
    );
  });

  describe('dispatch: true exports what apps/scheduler exports for its loops (docs/spec.md §6.1)', () => {
    // autoStart: false leaves start and stop to the test: stopped here even when an expectation failed.
    const workers: SundialWorker[] = [];
    let raw: Redis;
    beforeAll(() => {
      raw = new Redis(redis.url);
    });
    afterEach(async () => {
      await Promise.all(workers.splice(0).map((worker) => worker.stop()));
    });
    afterAll(async () => {
      await raw.quit();
    });

    /** An app with its own registry, not started. */
    async function dispatching(p: string, registry: Registry): Promise<TestingModule> {
      const app = await Test.createTestingModule({
        imports: [
          SundialModule.forRoot({ connection: redis.url, prefix: p, metricsRegistry: registry }),
          SundialWorkerModule.forRoot({
            prefix: p,
            dispatch: true,
            autoStart: false,
            metricsRegistry: registry,
          }),
        ],
      }).compile();
      apps.push(app);
      await app.init();
      workers.push(app.get(SundialWorker));
      return app;
    }
    const sample = async (registry: Registry, name: string) =>
      (await registry.getSingleMetricAsString(name)) ?? '';

    it('the backlog gauges and sundial_redis_up, read from Redis at scrape time', async () => {
      const registry = new Registry();
      const app = await dispatching(`w${prefix++}`, registry);
      await app.get(SundialWorker).start();
      await app.get(Timers).schedule({ key: 'later', handler: 'greet', payload: 'x', delay: '1h' });
      expect(await sample(registry, 'sundial_timers_pending')).toContain(
        'sundial_timers_pending{partition="0"} 1',
      );
      expect(await sample(registry, 'sundial_timers_overdue')).toContain(
        'sundial_timers_overdue{partition="0"} 0',
      );
      expect(await sample(registry, 'sundial_redis_up')).toContain('sundial_redis_up 1');
    });

    it("the reconciler's counts: a timer whose fire job vanished is re-armed and counted", async () => {
      const p = `w${prefix++}`;
      const registry = new Registry();
      const app = await dispatching(p, registry);
      const loops = app.get<FireLoops>(FIRE_LOOPS);
      // Only the dispatcher runs: the job it adds stays in the queue, where the test removes it.
      await loops.dispatcher.start();
      await app.get(Timers).schedule({ key: 'lost', handler: 'greet', payload: 'x', delay: 0 });
      const keys = new SundialKeys(p, 1);
      // take-due records the job it names by its hand-off ms, the `armed` entry's score (design.md "Jobs")
      const jobId = await waitFor(
        async () => {
          const at = await raw.zscore(keys.armed(0), 'lost');
          return at === null ? undefined : (await raw.zrangebyscore(keys.jobs(0), at, at))[0];
        },
        { what: 'the hand-off' },
      );
      const queue = new Queue(keys.queueName(0), { connection: { url: redis.url }, prefix: keys.bullPrefix }); // the module's opens at the worker's start
      await waitFor(async () => (await queue.getJob(jobId)) !== undefined, { what: 'the fire job' });
      await queue.remove(jobId);
      await queue.close();
      // Past the reconciler's grace (2 s) the timer is armed again.
      await waitFor(async () => (await loops.reconciler.reconcileOnce()).rearmed === 1, {
        what: 'the re-arm',
      });
      expect(await sample(registry, 'sundial_reconciler_rearmed_total')).toContain(
        'sundial_reconciler_rearmed_total 1',
      );
    });
  });

  it('refuses a serve list naming a partition that does not exist, when the module is defined', () => {
    expect(() => SundialWorkerModule.forRoot({ partitions: 2, serve: [0, 2] })).toThrow(
      expect.objectContaining({ reason: 'invalid', field: 'serve' }) as Error,
    );
  });

  it('refuses a worker module without SundialModule, saying so (not a DI error on a symbol)', async () => {
    const refused = await Test.createTestingModule({ imports: [SundialWorkerModule.forRoot()] })
      .compile()
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ reason: 'invalid', field: 'imports' });
  });

  it('refuses a worker whose partitions differ from SundialModule’s', async () => {
    const app = await Test.createTestingModule({
      imports: [
        // the boot fails before anything closes this module's connections: RedisTimers opened none yet
        SundialModule.forRoot({
          connection: redis.url,
          prefix: 'x',
          partitions: 2,
        }),
        SundialWorkerModule.forRoot({ prefix: 'x' }),
      ],
    })
      .compile()
      .catch((error: unknown) => error);
    expect(app).toMatchObject({ reason: 'invalid', field: 'partitions' });
  });
});
