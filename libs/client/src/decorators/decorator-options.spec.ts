import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  type CronExpressionSource,
  DistributedCron,
  type DistributedCronOptions,
  DistributedInterval,
  type HandlerOptions,
  type IntervalPeriodSource,
  OnTimer,
  SundialModule,
  Timers,
} from '../index';

/** Boots an app with `provider` on the memory backend: what its init refused, or 'booted'. */
async function boot(provider: new () => unknown): Promise<unknown> {
  const moduleRef = await Test.createTestingModule({
    imports: [SundialModule.forRoot({ backend: 'memory' })],
    providers: [provider],
  }).compile();
  const refused = await moduleRef.init().then(
    () => 'booted',
    (error: unknown) => error,
  );
  await moduleRef.close();
  return refused;
}

// Options in a variable: TypeScript checks excess fields of a literal only, so these compile.
const atMostOnce = { delivery: 'at-most-once', timeout: '30s' };
const misspelt = { timout: '30s' };
const fromSchedule = { timeZone: 'Europe/Paris', utcOffset: 60 };
const lowerCase = { timezone: 'Europe/Paris', delivery: 'at-most-once' as const };

describe('decorator options are checked at boot', () => {
  it("@OnTimer({ delivery }) is refused with where delivery goes: a timer's own, given at schedule", async () => {
    @Injectable()
    class Payments {
      @OnTimer('payment.capture', atMostOnce as HandlerOptions)
      capture(): void {}
    }
    expect(await boot(Payments)).toMatchObject({
      reason: 'invalid',
      field: 'delivery',
      message:
        "Payments.capture: @OnTimer('payment.capture') takes no delivery: a timer's delivery is its own, given when it is scheduled.",
      fix: expect.stringContaining(
        "timers.schedule({ key, handler: 'payment.capture', delivery: 'at-most-once', … })",
      ),
    });
  });

  it('a misspelt @OnTimer option is refused with a "did you mean", not ignored', async () => {
    @Injectable()
    class Payments {
      @OnTimer('payment.capture', misspelt as HandlerOptions)
      capture(): void {}
    }
    expect(await boot(Payments)).toMatchObject({
      reason: 'invalid',
      field: 'timout',
      fix: 'Did you mean "timeout"? Rename the field "timout" to "timeout".',
    });
  });

  it.each([
    ['utcOffset', fromSchedule, "timeZone: 'Etc/GMT-1'"],
    ['timezone', lowerCase, 'Did you mean "timeZone"?'],
  ])(
    'an unknown @DistributedCron option (%s) stops the boot instead of running in UTC',
    async (field, options, fix) => {
      @Injectable()
      class Digest {
        @DistributedCron('digest.daily', '0 9 * * *', options as DistributedCronOptions)
        send(): void {}
      }
      const refused = await boot(Digest);
      expect(refused).toMatchObject({ reason: 'invalid', field, fix: expect.stringContaining(fix) });
      expect((refused as Error).message).toMatch(/^Digest\.send @DistributedCron/);
    },
  );

  it.each([
    ['name', { name: 'digest' }, "the decorator's first argument", "Timers.get('cron:digest.daily')"],
    ['distributed', { distributed: true }, 'always distributed', 'Remove distributed'],
    ['lockTtlMs', { lockTtlMs: 60_000 }, 'always distributed', 'lockTtlMs'],
    ['threshold', { threshold: 250 }, 'no equivalent', 'catchup'],
  ])(
    "@nestjs/schedule's @Cron option %s is refused with what it becomes (a name in the options was dropped unsaid)",
    async (field, options, message, fix) => {
      @Injectable()
      class Digest {
        @DistributedCron('digest.daily', '0 9 * * *', options as DistributedCronOptions)
        send(): void {}
      }
      expect(await boot(Digest)).toMatchObject({
        reason: 'invalid',
        field,
        message: expect.stringContaining(message),
        fix: expect.stringContaining(fix),
      });
    },
  );

  it('a name in @OnTimer options is refused too, not dropped for the first argument', async () => {
    @Injectable()
    class Payments {
      @OnTimer('payment.capture', { name: 'payment.charge' } as HandlerOptions)
      capture(): void {}
    }
    expect(await boot(Payments)).toMatchObject({ reason: 'invalid', field: 'name' });
  });

  it('known options boot', async () => {
    @Injectable()
    class Digest {
      @OnTimer('digest.part', { timeout: '1m' })
      part(): void {}

      @DistributedCron('digest.daily', '0 9 * * *', {
        timeZone: 'Europe/Paris',
        delivery: 'at-most-once',
        catchup: 'skip',
      })
      send(): void {}
    }
    expect(await boot(Digest)).toBe('booted');
  });
});

// What reaches a decorator from habit or from the environment: TypeScript passes each with a cast.
const unsetVariable = process.env.SUNDIAL_SPEC_UNSET_VARIABLE as string;
const HEARTBEAT_EVERY = Symbol('HEARTBEAT_EVERY');

/** What the boot of a provider whose method `Digest.send` carries `decorator` gives. */
function bootDecorated(decorator: MethodDecorator): Promise<unknown> {
  @Injectable()
  class Digest {
    send(): void {}
  }
  decorator(Digest.prototype, 'send', Object.getOwnPropertyDescriptor(Digest.prototype, 'send')!);
  return boot(Digest);
}

describe("a row's expression or period that is no source stops the boot naming the decorator", () => {
  it.each([
    // process.env read as the class loads, before ConfigModule: was a TypeError of the 'in' operator
    ['undefined', unsetVariable, "Give { config: 'DIGEST_DAILY_CRON' } (read through ConfigService at boot)"],
    [
      'a Date',
      new Date('2026-03-01T09:00:00Z'),
      "timers.schedule({ key, handler: 'digest.daily', at: date.getTime() })",
    ],
    ['5000', 5000, "@DistributedInterval('digest.daily', 5000)"],
    // was "its expression comes from the provider undefined"
    ['an object of confg', { confg: 'DIGEST_CRON' }, "Write { config: 'DIGEST_DAILY_CRON' }"],
  ])('@DistributedCron given %s', async (shown, expression, fix) => {
    expect(
      await bootDecorated(DistributedCron('digest.daily', expression as CronExpressionSource)),
    ).toMatchObject({
      reason: 'invalid',
      field: 'cron',
      message: `@DistributedCron('digest.daily') on Digest.send: its expression is ${shown}, not a cron string, { config: KEY } or { inject: TOKEN }.`,
      fix: expect.stringContaining(fix),
    });
  });

  it('@DistributedInterval given undefined', async () => {
    expect(
      await bootDecorated(DistributedInterval('heartbeat', unsetVariable as IntervalPeriodSource)),
    ).toMatchObject({
      reason: 'invalid',
      field: 'every',
      message: `@DistributedInterval('heartbeat') on Digest.send: its period is undefined, not ms, a Duration, { config: KEY } or { inject: TOKEN }.`,
      fix: expect.stringContaining("{ config: 'HEARTBEAT_EVERY' }"),
    });
  });

  it('the sources still boot', async () => {
    @Injectable()
    class Digest {
      @DistributedCron('digest.daily', { inject: 'DIGEST_CRON' })
      send(): void {}

      @DistributedInterval('heartbeat', { inject: HEARTBEAT_EVERY })
      beat(): void {}
    }
    const moduleRef = await Test.createTestingModule({
      imports: [SundialModule.forRoot({ backend: 'memory' })],
      providers: [
        Digest,
        { provide: 'DIGEST_CRON', useValue: '0 9 * * *' },
        { provide: HEARTBEAT_EVERY, useValue: '30s' },
      ],
    }).compile();
    await moduleRef.init();
    expect(await moduleRef.get(Timers).get('interval:heartbeat')).toMatchObject({ everyMs: 30_000 });
    await moduleRef.close();
  });
});

describe('disabled and waitForCompletion are booleans', () => {
  // a cast of an environment variable: "false" was truthy, and removed the row
  it.each(['disabled', 'waitForCompletion'])('%s given a string stops the boot', async (field) => {
    const options = { [field]: 'false' } as unknown as DistributedCronOptions;
    expect(await bootDecorated(DistributedCron('digest.daily', '0 9 * * *', options))).toMatchObject({
      reason: 'invalid',
      field,
      message: `Digest.send @DistributedCron: ${field} "false" is not a boolean (a string is not read: "false" is truthy).`,
      fix: expect.stringContaining(`${field}: process.env.X === 'true'`),
    });
  });

  it('on @DistributedInterval too', async () => {
    const options = { disabled: 1 } as unknown as { disabled: boolean };
    expect(await bootDecorated(DistributedInterval('heartbeat', '30s', options))).toMatchObject({
      reason: 'invalid',
      field: 'disabled',
    });
  });
});

describe("a timer's own option on @OnTimer is said where it goes", () => {
  // a @Processor's job options moved along with its method: they said "the known fields are timeout"
  it.each([
    ['retry', { retry: { attempts: 3 } }, "a timer's retry is its own", 'retry: { attempts: 3'],
    [
      'attempts',
      { attempts: 3 },
      "BullMQ's attempts is retry.attempts of each timer",
      'retry: { attempts: 3',
    ],
    ['backoff', { backoff: 1000 }, "BullMQ's backoff is retry.backoff of each timer", 'retry: {'],
    ['overlap', { overlap: 'skip' }, "a timer's overlap is its own", "overlap: 'skip'"],
  ])('%s', async (field, options, why, example) => {
    expect(await bootDecorated(OnTimer('invoice.remind', options as HandlerOptions))).toMatchObject({
      reason: 'invalid',
      field,
      message: `Digest.send: @OnTimer('invoice.remind') takes no ${field}: ${why}, given when it is scheduled.`,
      fix: expect.stringContaining(`timers.schedule({ key, handler: 'invoice.remind', ${example}`),
    });
  });

  it("@DistributedCron's tz (a spec's name) is refused naming timeZone, not listed among the known fields", async () => {
    const options = { tz: 'Europe/Paris' } as DistributedCronOptions;
    expect(await bootDecorated(DistributedCron('digest.daily', '0 9 * * *', options))).toMatchObject({
      reason: 'invalid',
      field: 'tz',
      fix: "Rename tz to timeZone: @DistributedCron takes @nestjs/schedule's name.",
    });
  });
});
