import { Inject, Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { CronRegistrar, DistributedCron, DistributedInterval, OnTimer, Timers } from '@sundial/client';
import { type JsonValue, SundialError, type TimerContext, VirtualClock } from '@sundial/core';
import { SundialTestingModule, type SundialTestingModuleOptions } from './sundial-testing.module';

@Injectable()
class Audit {
  readonly lines: string[] = [];
}

@Injectable()
class Billing {
  constructor(
    @Inject(Timers) private readonly timers: Timers,
    @Inject(Audit) private readonly audit: Audit,
  ) {}

  trialStarted(account: string): Promise<unknown> {
    return this.timers.schedule({
      key: `trial:${account}`,
      handler: 'trial.end',
      payload: account,
      delay: '14d',
    });
  }

  @OnTimer('trial.end')
  endTrial(payload: JsonValue, ctx: TimerContext): void {
    this.audit.lines.push(`trial of ${String(payload)} ended at ${new Date(ctx.due).toISOString()}`);
  }

  @DistributedCron('billing.nightly', '0 2 * * *')
  nightly(_payload: JsonValue, ctx: TimerContext): void {
    this.audit.lines.push(`nightly ${new Date(ctx.due).toISOString().slice(0, 10)}`);
  }
}

@Module({ providers: [Audit, Billing], exports: [Billing, Audit] })
class BillingModule {}

@Injectable()
class Heartbeat {
  constructor(@Inject(Audit) private readonly audit: Audit) {}

  @DistributedInterval('billing.heartbeat', '15m')
  beat(_payload: JsonValue, ctx: TimerContext): void {
    this.audit.lines.push(`beat ${new Date(ctx.due).toISOString().slice(11, 16)}`);
  }
}

/** A Nest logger for `setLogger` that keeps its warn calls (each call's arguments) in `warned`. */
function warnings() {
  const warned: unknown[][] = [];
  const nest = {
    log: () => undefined,
    error: () => undefined,
    warn: (...args: unknown[]) => void warned.push(args),
  };
  return { warned, nest };
}

describe('SundialTestingModule', () => {
  it("drives the app's @OnTimer and @DistributedCron methods on a virtual clock", async () => {
    const app = await Test.createTestingModule({
      imports: [SundialTestingModule.forRoot({ now: '2026-03-01T12:00:00Z' }), BillingModule],
    }).compile();
    await app.init();
    const clock = app.get(VirtualClock);
    await app.get(Billing).trialStarted('acme');

    await clock.advance('14d');
    const { lines } = app.get(Audit);
    expect(lines.filter((line) => line.startsWith('nightly'))).toHaveLength(14);
    expect(lines[0]).toBe('nightly 2026-03-02');
    expect(lines.at(-1)).toBe('trial of acme ended at 2026-03-15T12:00:00.000Z');
    await app.close();
  });

  it('a test that schedules before app.init() is told so (the @OnTimer methods are found at init)', async () => {
    const app = await Test.createTestingModule({
      imports: [SundialTestingModule.forRoot({ now: '2026-03-01T12:00:00Z' }), BillingModule],
    }).compile();
    // Nest's usual unit-test shape: a service from the compiled module, no init. Before, the fix said to
    // register an @OnTimer('trial.end') method, which the app has.
    await expect(app.get(Billing).trialStarted('acme')).rejects.toMatchObject({
      reason: 'invalid',
      field: 'handler',
      fix: expect.stringContaining('a test calls `await app.init()` before it schedules'),
    });
    await app.init();
    await expect(app.get(Billing).trialStarted('acme')).resolves.toMatchObject({ key: 'trial:acme' });
    await app.close();
  });

  it('drives @DistributedInterval methods on the virtual clock: one run a period', async () => {
    const app = await Test.createTestingModule({
      imports: [SundialTestingModule.forRoot({ now: '2026-03-01T12:00:00Z' })],
      providers: [Audit, Heartbeat],
    }).compile();
    await app.init();
    await app.get(VirtualClock).advance('1h');
    expect(app.get(Audit).lines).toEqual(['beat 12:15', 'beat 12:30', 'beat 12:45', 'beat 13:00']);
    // SchedulerRegistry.getCronJobs(): the app's declared rows and their next runs
    const rows = await app.get(CronRegistrar).rows();
    expect(rows.map((row) => [row.key, new Date(row.dueAt).toISOString()])).toEqual([
      ['interval:billing.heartbeat', '2026-03-01T13:15:00.000Z'],
    ]);
    await app.close();
  });

  it('a throwing @DistributedCron is a run failed line (warn) and a failed ledger entry, and goes on', async () => {
    @Injectable()
    class Flaky {
      @DistributedCron('flaky.hourly', '0 * * * *')
      run(): void {
        throw new Error('the upstream said no');
      }
    }
    const { warned, nest } = warnings();
    const app = await Test.createTestingModule({
      imports: [SundialTestingModule.forRoot({ now: '2026-03-01T12:30:00Z' })],
      providers: [Flaky],
    })
      .setLogger(nest)
      .compile();
    await app.init();
    await app.get(VirtualClock).advance('2h');
    expect(warned).toEqual([
      [
        expect.objectContaining({
          msg: 'run failed',
          key: 'cron:flaky.hourly',
          due: Date.parse('2026-03-01T13:00:00Z'),
          error: expect.objectContaining({ message: 'the upstream said no' }),
        }),
        'Sundial',
      ],
      [expect.objectContaining({ msg: 'run failed', due: Date.parse('2026-03-01T14:00:00Z') }), 'Sundial'],
    ]);
    const history = await app.get(Timers).history('cron:flaky.hourly');
    expect(history.filter((entry) => entry.event === 'failed')).toHaveLength(2);
    await app.close();
  });

  it("sends Sundial's lines to the test's Nest logger, with their fields", async () => {
    const { warned, nest } = warnings();
    const app = await Test.createTestingModule({
      imports: [SundialTestingModule.forRoot({ now: '2026-03-01T12:00:00Z' }), BillingModule],
    })
      .setLogger(nest)
      .compile();
    await app.init();
    await app.get(Billing).trialStarted('acme');
    await app
      .get(Timers)
      .schedule({ key: 'trial:acme', handler: 'trial.end', delay: '1d', ifExists: 'keep' });
    await app.close();
    expect(warned).toEqual([
      [
        expect.objectContaining({ msg: expect.stringMatching(/^ifExists keep/), key: 'trial:acme' }),
        'Sundial',
      ],
    ]);
  });

  it('app.close() gives a running handler its shutdownGraceMs (on the virtual clock), as on Redis', async () => {
    let release = (): void => undefined;
    const signals: AbortSignal[] = [];
    const slow = async (_payload: JsonValue, ctx: TimerContext) => {
      signals.push(ctx.signal);
      await new Promise<void>((resolve) => (release = resolve));
    };
    const app = await Test.createTestingModule({
      imports: [SundialTestingModule.forRoot({ handlers: { slow }, shutdownGraceMs: 5_000 })],
    }).compile();
    await app.init();
    await app.get(Timers).schedule({ key: 'slow', handler: 'slow', delay: 10 });
    await app.get(VirtualClock).advance(10);
    let closed = false;
    const closing = app.close().then(() => (closed = true));
    await app.get(VirtualClock).advance(4_000); // virtual time: no real wait
    expect([closed, signals[0].aborted]).toEqual([false, false]);
    release();
    await closing;
    expect(signals[0].aborted).toBe(false);
  });

  it("takes the app's limits, as SundialModule does: a payload the app allows is not refused in its tests", async () => {
    const big = 'x'.repeat(100_000); // over the default 64 KiB
    const app = await Test.createTestingModule({
      imports: [
        SundialTestingModule.forRoot({
          handlers: { h: () => undefined },
          limits: { maxPayloadBytes: 200_000, minEveryMs: 10 },
        }),
      ],
    }).compile();
    await app.init();
    const timers = app.get(Timers);
    await expect(
      timers.schedule({ key: 'big', handler: 'h', payload: big, delay: '1d' }),
    ).resolves.toMatchObject({
      payload: big,
    });
    await expect(timers.schedule({ key: 'fast', handler: 'h', every: 20 })).resolves.toMatchObject({
      everyMs: 20,
    });
    await expect(
      timers.schedule({ key: 'bigger', handler: 'h', payload: 'x'.repeat(300_000), delay: '1d' }),
    ).rejects.toMatchObject({ reason: 'payload-too-large', field: 'payload' });
    await app.close();
  });

  it.each([
    ['a Date', new Date('2026-03-01T12:00:00Z')],
    ['epoch ms', Date.parse('2026-03-01T12:00:00Z')],
    ['an ISO-8601 instant', '2026-03-01T13:00:00+01:00'],
  ])('starts the virtual clock at a `now` given as %s', async (_, now) => {
    const app = await Test.createTestingModule({
      imports: [SundialTestingModule.forRoot({ now })],
    }).compile();
    expect(new Date(app.get(VirtualClock).now()).toISOString()).toBe('2026-03-01T12:00:00.000Z');
    await app.close();
  });

  it.each([
    ['now', { now: new Date('tomorrow') }],
    ['limits.maxPayloadBytes', { limits: { maxPayloadBytes: 0 } }],
    ['limits.minEvery', { limits: { minEvery: 10 } }],
    ['now', { now: 'tomorrow' }],
    ['now', { now: '2026-03-01T12:00:00' }],
    ['now', { now: Number.NaN }],
    ['now', { now: -1 }],
    ['handlers.remind', { handlers: { remind: 'yes' } }],
    ['appName', { appName: '' }],
    ['clock', { clock: new VirtualClock(0) }],
    ['shutdownGraceMs', { shutdownGraceMs: -1 }],
  ])('refuses a wrong %s with the refusal shape', (field, options) => {
    let error: unknown;
    try {
      SundialTestingModule.forRoot(options as SundialTestingModuleOptions);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(SundialError);
    expect(error).toMatchObject({
      reason: 'invalid',
      field,
      message: expect.any(String),
      fix: expect.any(String),
    });
  });
});
