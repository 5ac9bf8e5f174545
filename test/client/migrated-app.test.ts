import { Injectable, Module } from '@nestjs/common';
import { ConfigModule, ConfigService } from '@nestjs/config';
import { LazyModuleLoader } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import {
  CronRegistrar,
  DistributedCron,
  DistributedInterval,
  OnTimer,
  SundialModule,
  SundialWorkerModule,
  Timers,
} from '@sundial/client';
import type { TimerContext } from '@sundial/core';
import { waitFor } from '@sundial/testing/harness';
import { nestAppsOnRedis } from './nest-apps-on-redis';

/** What the migrated handlers saw, for the test to read. */
@Injectable()
class Seen {
  readonly runs: { handler: string; key: string; attempt: number; payload: unknown }[] = [];
}

/**
 * Was a @nestjs/schedule service: `@Cron(process.env.DIGEST_CRON, { name: 'digest', timeZone:
 * 'Europe/Paris', waitForCompletion: true })`, `@Interval('poll', 30_000)`, and a `SchedulerRegistry`
 * use (`addCronJob('cleanup', new CronJob(…))`, `getCronJob('digest').stop()/.start()`, `deleteCronJob`).
 * Migrated as README's "Coming from @nestjs/schedule" table says.
 */
@Injectable()
class Reports {
  constructor(
    private readonly timers: Timers,
    private readonly seen: Seen,
  ) {}

  @DistributedCron('digest', { config: 'DIGEST_CRON' }, { timeZone: 'Europe/Paris', waitForCompletion: true })
  async digest(): Promise<void> {}

  @DistributedInterval('poll', 30_000)
  poll(): void {}

  /** `schedulerRegistry.addCronJob('cleanup', new CronJob('0 * * * *', …))` */
  addCleanup() {
    return this.timers.schedule({ key: 'cleanup', handler: 'cleanup', cron: '0 * * * *', tz: 'UTC' });
  }

  /** `schedulerRegistry.addInterval('refresh', setInterval(…, 60_000))` / `addTimeout('warm', setTimeout(…, 5_000))` */
  addRefreshAndWarm() {
    return this.timers.scheduleMany([
      { key: 'refresh', handler: 'cleanup', every: 60_000 },
      { key: 'warm', handler: 'cleanup', delay: 5_000 },
    ]);
  }

  @OnTimer('cleanup')
  cleanup(_payload: unknown, ctx: TimerContext): void {
    this.seen.runs.push({ handler: 'cleanup', key: ctx.key, attempt: ctx.attempt, payload: null });
  }
}

interface Welcome {
  userId: string;
}

/**
 * Was a @nestjs/bullmq producer and `@Processor('emails') … extends WorkerHost` switching on `job.name`:
 * `queue.add('welcome', { userId }, { jobId: `welcome:${userId}`, delay, attempts: 2, backoff })`.
 */
@Injectable()
class Emails {
  private failedOnce = false;

  constructor(
    private readonly timers: Timers,
    private readonly seen: Seen,
  ) {}

  welcomeLater(userId: string, delay: number) {
    return this.timers.schedule({
      key: `welcome:${userId}`,
      handler: 'welcome',
      payload: { userId },
      delay,
      ifExists: 'keep',
      retry: { attempts: 2, backoff: { type: 'fixed', delay: 10 } },
    });
  }

  @OnTimer('welcome')
  async welcome(payload: Welcome, ctx: TimerContext<Welcome>): Promise<void> {
    this.seen.runs.push({ handler: 'welcome', key: ctx.key, attempt: ctx.attempt, payload });
    if (payload.userId === 'flaky' && !this.failedOnce) {
      this.failedOnce = true;
      throw new Error('smtp down');
    }
  }
}

/** A feature the app loads on demand (`lazyModuleLoader.load(() => import('./exports.module'))`). */
@Injectable()
class Exports {
  constructor(private readonly timers: Timers) {}

  exportLater(id: string) {
    return this.timers.schedule({ key: `export:${id}`, handler: 'export.run', payload: { id }, delay: 50 });
  }

  readonly ran: string[] = [];

  @OnTimer('export.run')
  run(payload: { id: string }): void {
    this.ran.push(payload.id);
  }
}

@Module({ providers: [Exports] })
class ExportsModule {}

@Module({
  imports: [
    ConfigModule.forRoot({
      isGlobal: true,
      ignoreEnvFile: true,
      load: [() => ({ DIGEST_CRON: '0 9 * * *', SUNDIAL_CONCURRENCY: 16 })],
    }),
  ],
  providers: [Seen, Reports, Emails],
})
class FeatureModule {}

describe('a @nestjs/schedule + @nestjs/bullmq app migrated as the README says', () => {
  const env = nestAppsOnRedis();

  const boot = async () => {
    const app = await Test.createTestingModule({
      imports: [
        FeatureModule,
        SundialModule.forRootAsync({
          inject: [ConfigService],
          useFactory: () => ({ connection: env.redis.url, prefix: 'migrated', appName: 'migrated' }),
        }),
        // the README's form, its factory's parameter untyped (it did not compile: typed never)
        SundialWorkerModule.forRootAsync({
          prefix: 'migrated',
          inject: [ConfigService],
          useFactory: (c) => ({ concurrency: c.get('SUNDIAL_CONCURRENCY'), dispatch: true }),
        }),
      ],
    }).compile();
    env.apps.push(app);
    await app.init();
    return app;
  };

  it('keeps the @Cron and @Interval rows and answers the SchedulerRegistry calls', async () => {
    const app = await boot();
    const timers = app.get(Timers);
    // getCronJobs() / getIntervals()
    const rows = await app.get(CronRegistrar).rows();
    // waitForCompletion: true is the row's default overlap (skip, not written); @Interval's is allow
    expect(rows.map(({ key, cron, tz, everyMs, overlap }) => ({ key, cron, tz, everyMs, overlap }))).toEqual([
      { key: 'cron:digest', cron: '0 9 * * *', tz: 'Europe/Paris', everyMs: undefined, overlap: undefined },
      { key: 'interval:poll', cron: undefined, tz: undefined, everyMs: 30_000, overlap: 'allow' },
    ]);
    // getCronJob('digest').stop(): paused across boots; .start()
    expect((await timers.pause('cron:digest')).status).toBe('paused');
    await env.closeApps();
    const again = (await boot()).get(Timers);
    expect((await again.get('cron:digest'))?.status).toBe('paused');
    expect((await again.resume('cron:digest')).status).toBe('pending');
    // addCronJob / deleteCronJob
    const cleanup = await env.apps[0]!.get(Reports).addCleanup();
    expect(cleanup.cron).toBe('0 * * * *');
    expect(await again.cancel('cleanup')).toBe(true);
    // addInterval / addTimeout, doesExist, deleteInterval / deleteTimeout
    await env.apps[0]!.get(Reports).addRefreshAndWarm();
    expect((await again.get('refresh'))?.everyMs).toBe(60_000);
    expect((await again.get('warm')) !== null).toBe(true);
    expect([await again.cancel('refresh'), await again.cancel('warm')]).toEqual([true, true]);
    expect(await again.get('refresh')).toBeNull();
  }, 60_000);

  it('runs the processor jobs', async () => {
    const app = await boot();
    const timers = app.get(Timers);
    // queue.add with a jobId: a second add of a live id is a no-op
    const emails = app.get(Emails);
    const first = await emails.welcomeLater('ada', 60_000);
    expect((await emails.welcomeLater('ada', 1)).id).toBe(first.id);
    // job.changeDelay(ms)
    await timers.reschedule('welcome:ada', { delay: 50 });
    // attempts + backoff: the first try throws, the retry is attempt 2
    await emails.welcomeLater('flaky', 50);
    // @OnWorkerEvent('failed')
    const failed: string[] = [];
    timers.on('failed', ({ key, error }) => failed.push(`${key}: ${error?.message}`));
    const seen = app.get(Seen);
    await waitFor(() => seen.runs.filter(({ handler }) => handler === 'welcome').length === 3, {
      timeoutMs: 10_000, // deadline
      what: 'the welcome runs',
    });
    expect(seen.runs.map(({ key, attempt, payload }) => ({ key, attempt, payload }))).toEqual(
      expect.arrayContaining([
        { key: 'welcome:ada', attempt: 1, payload: { userId: 'ada' } },
        { key: 'welcome:flaky', attempt: 1, payload: { userId: 'flaky' } },
        { key: 'welcome:flaky', attempt: 2, payload: { userId: 'flaky' } },
      ]),
    );
    // removeOnFail / job.log: the ledger
    await waitFor(
      async () => (await timers.history('welcome:flaky')).some(({ event }) => event === 'completed'),
      {
        timeoutMs: 10_000, // deadline
        what: "the flaky welcome's retry recorded",
      },
    );
    expect(await timers.history('welcome:flaky')).toContainEqual(
      expect.objectContaining({ event: 'failed', message: 'smtp down', attempt: 1 }),
    );
    await waitFor(() => failed.length > 0, { timeoutMs: 5_000 /* deadline */, what: 'the failed event' });
    expect(failed).toEqual(['welcome:flaky: smtp down']);
  }, 60_000);

  it("runs the @OnTimer methods of a module the app loads through LazyModuleLoader (Nest's lazy loading)", async () => {
    const app = await boot();
    const loaded = await app.get(LazyModuleLoader).load(() => ExportsModule);
    await loaded.get(Exports).exportLater('e1');
    const timers = app.get(Timers);
    await waitFor(
      async () => (await timers.history('export:e1')).some(({ event }) => event === 'completed'),
      {
        timeoutMs: 10_000, // deadline
        what: 'the lazily loaded handler run',
      },
    );
    expect(loaded.get(Exports).ran).toEqual(['e1']);
  }, 60_000);
});
