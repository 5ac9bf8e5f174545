import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import {
  DistributedCron,
  type DistributedCronOptions,
  type HandlerOptions,
  OnTimer,
  SundialModule,
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
