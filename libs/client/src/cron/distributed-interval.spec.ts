import { Injectable, Logger, type Type } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { Test } from '@nestjs/testing';
import { type TimerContext, VirtualClock } from '@sundial/core';
import { registrarOnRedis } from '../../../../test/client/registrar-on-redis';
import {
  DistributedCron,
  DistributedInterval,
  type DistributedIntervalOptions,
  SundialModule,
  Timers,
} from '../index';

const dues: number[] = [];
const PERIOD = Symbol('PERIOD');

@Injectable()
class Heartbeat {
  @DistributedInterval('beat', '30s')
  beat(_payload: unknown, ctx: TimerContext): void {
    dues.push(ctx.due);
    if (dues.length === 1) throw new Error('the first beat fails');
  }
}

@Injectable()
class SlowerHeartbeat {
  @DistributedInterval('beat', '1m', { jitter: '5s' })
  beat(): void {}
}

@Injectable()
class ConfiguredHeartbeat {
  @DistributedInterval('beat', { config: 'BEAT_EVERY' })
  beat(): void {}
}

@Injectable()
class InjectedHeartbeat {
  @DistributedInterval('beat', { inject: PERIOD })
  beat(): void {}
}

@Injectable()
class WaitingHeartbeat {
  @DistributedInterval('beat', '30s', { waitForCompletion: true, retry: { attempts: 2 } })
  beat(): void {}
}

@Injectable()
class DisabledHeartbeat {
  @DistributedInterval('beat', '30s', { disabled: true })
  beat(): void {}

  // the app keeps a cron: its interval row is removed as an orphan of a named or declaring app
  @DistributedCron('digest', '0 9 * * *')
  digest(): void {}
}

const misspelt = { waitForCompleton: true };
const zoned = { timeZone: 'Europe/Paris' };

/** `providers` in an app on the memory backend; the config holds BEAT_EVERY = `period`. */
async function onMemory(providers: Type[], period: unknown = '45s', clock?: VirtualClock) {
  return Test.createTestingModule({
    imports: [
      ConfigModule.forRoot({ ignoreEnvFile: true, load: [() => ({ BEAT_EVERY: period })] }),
      SundialModule.forRoot({ backend: 'memory', clock }),
    ],
    providers: [...providers, { provide: PERIOD, useValue: period }],
  }).compile();
}

async function refusalOf(providers: Type[], period?: unknown): Promise<unknown> {
  const app = await onMemory(providers, period);
  const refused = await app.init().then(
    () => 'booted',
    (error: unknown) => error,
  );
  await app.close();
  return refused;
}

describe('@DistributedInterval', () => {
  it('memory backend: one row interval:<name>, one run a period, a run that throws does not stop it', async () => {
    dues.length = 0;
    const clock = new VirtualClock(Date.parse('2026-03-01T00:00:00Z'));
    const app = await onMemory([Heartbeat], undefined, clock);
    await app.init();
    const row = await app.get(Timers).get('interval:beat');
    expect(row).toMatchObject({
      kind: 'interval',
      handler: 'beat',
      everyMs: 30_000,
      overlap: 'allow',
      awaitTask: false,
      delivery: 'at-least-once',
      meta: { sundialOwner: 'distributed-interval', sundialApp: 'app' },
    });
    await clock.advance('95s'); // virtual clock
    expect(dues.map((due) => (due - row!.scheduledAt) / 1000)).toEqual([30, 60, 90]);
    await app.close();
  });

  it('takes its period from a config key (digits = ms) or a provider, as @DistributedCron its expression', async () => {
    for (const [provider, period, everyMs] of [
      [ConfiguredHeartbeat, '45s', 45_000],
      [ConfiguredHeartbeat, '30000', 30_000],
      [ConfiguredHeartbeat, 20_000, 20_000],
      [InjectedHeartbeat, '2m', 120_000],
    ] as const) {
      const app = await onMemory([provider], period);
      await app.init();
      expect(await app.get(Timers).get('interval:beat')).toMatchObject({ everyMs });
      await app.close();
    }
  });

  it.each([
    [
      'a config value that is no period',
      ConfiguredHeartbeat,
      true,
      'every',
      "the config key 'BEAT_EVERY' gives true, not a period.",
    ],
    ['a config value that does not parse', ConfiguredHeartbeat, '5 parsecs', 'every', ''],
    ['a negative period from a provider', InjectedHeartbeat, -5, 'every', ''],
  ])('refuses %s at boot, naming the decorator', async (_case, provider, period, field, message) => {
    const refused = await refusalOf([provider], period);
    expect(refused).toMatchObject({ reason: 'invalid', field });
    expect((refused as Error).message).toContain(
      `@DistributedInterval('beat') on ${provider.name}.beat: ${message}`,
    );
  });

  it('a row whose endAt has passed is not written, and no later boot stops on it; endAt before startAt still does', async () => {
    @Injectable()
    class Campaign {
      @DistributedCron('promo.daily', '0 9 * * *', { endAt: '2026-03-03T00:00:00Z' })
      daily(): void {}

      @DistributedInterval('promo.beat', '1h', { endAt: '2026-03-03T00:00:00Z' })
      beat(): void {}
    }
    const clock = new VirtualClock(Date.parse('2026-03-01T00:00:00Z'));
    const first = await onMemory([Campaign], undefined, clock);
    await first.init();
    expect(await first.get(Timers).get('cron:promo.daily')).not.toBeNull();
    await clock.advance('5d'); // virtual clock
    await first.close();
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const later = await onMemory([Campaign], undefined, clock);
    await later.init();
    expect(warn.mock.calls.map(([message]) => message)).toEqual([
      expect.stringMatching(
        /^@DistributedCron\('promo.daily'\) on Campaign.daily: not written, its endAt 2026-03-03T00:00:00.000Z leaves no slot/,
      ),
      expect.stringMatching(/^@DistributedInterval\('promo.beat'\) on Campaign.beat: not written/),
    ]);
    warn.mockRestore();
    expect((await later.get(Timers).list({})).items).toEqual([]);
    await later.close();

    @Injectable()
    class Backwards {
      @DistributedInterval('promo.beat', '1h', {
        startAt: '2026-03-05T00:00:00Z',
        endAt: '2026-03-04T00:00:00Z',
      })
      beat(): void {}
    }
    expect(await refusalOf([Backwards])).toMatchObject({ reason: 'invalid', field: 'endAt' });
  });

  it('waitForCompletion: true waits for the run (overlap skip) and takes a retry', async () => {
    const app = await onMemory([WaitingHeartbeat]);
    await app.init();
    expect(await app.get(Timers).get('interval:beat')).toMatchObject({
      awaitTask: true,
      retry: { attempts: 2 },
    });
    await app.close();
  });

  it('refuses a retry on an interval that does not wait, saying to add waitForCompletion', async () => {
    @Injectable()
    class Retrying {
      @DistributedInterval('beat', '1m', { retry: { attempts: 3 } })
      beat(): void {}
    }
    const refused = await refusalOf([Retrying]);
    expect(refused).toMatchObject({
      reason: 'invalid',
      field: 'retry',
      fix: expect.stringContaining('Add waitForCompletion: true'),
    });
    expect((refused as Error).message).toContain(
      "@DistributedInterval('beat') on Retrying.beat: retry needs runs",
    );
  });

  it.each([
    ['waitForCompleton', misspelt, 'Did you mean "waitForCompletion"?'],
    ['timeZone', zoned, 'Remove "timeZone"'],
  ])('an unknown option (%s) stops the boot with a fix', async (field, options, fix) => {
    @Injectable()
    class Beat {
      @DistributedInterval('beat', '1m', options as DistributedIntervalOptions)
      beat(): void {}
    }
    const refused = await refusalOf([Beat]);
    expect(refused).toMatchObject({ reason: 'invalid', field, fix: expect.stringContaining(fix) });
    expect((refused as Error).message).toContain(
      'Beat.beat @DistributedInterval options has an unknown field',
    );
  });

  // One row per name across replicas, and the row back after a reset: cron-registrar.spec.ts, whose
  // DailyDigest declares an interval too.
  describe('with Redis: redeploys', () => {
    const redisApps = registrarOnRedis('i');
    const boot = (provider: Type, period = '30s') =>
      redisApps.boot([provider], { config: { BEAT_EVERY: period } });

    it('a redeploy follows the decorator: same period kept, changed period replaced, removed; API timers untouched', async () => {
      const first = await boot(Heartbeat);
      const timers = first.get(Timers);
      const created = await timers.get('interval:beat');
      await timers.schedule({ key: 'interval:beat.api', handler: 'beat', every: '1h' });
      await first.close();

      // '30s' from the config is the same row: nothing written, the grid goes on
      const same = await boot(ConfiguredHeartbeat, '30000');
      expect(await same.get(Timers).get('interval:beat')).toMatchObject({ id: created?.id, version: 1 });
      // paused (getCronJob(name).stop()): the next boot leaves it paused
      await same.get(Timers).pause('interval:beat');
      await same.close();
      const again = await boot(Heartbeat);
      expect(await again.get(Timers).get('interval:beat')).toMatchObject({
        id: created?.id,
        status: 'paused',
      });
      await again.close();

      const slower = await boot(SlowerHeartbeat);
      const replaced = await slower.get(Timers).get('interval:beat');
      expect(replaced).toMatchObject({ everyMs: 60_000, jitter: 5_000 });
      expect(replaced?.id).not.toBe(created?.id);
      await slower.close();

      const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      const removed = await boot(DisabledHeartbeat);
      const after = removed.get(Timers);
      expect(await after.get('interval:beat')).toBeNull();
      expect(warn.mock.calls.map(([message]) => message)).toEqual([
        expect.stringMatching(
          /^removed interval:beat: its @DistributedInterval\('beat'\) is gone from this app or disabled/,
        ),
      ]);
      warn.mockRestore();
      expect(await after.get('interval:beat.api')).toMatchObject({ everyMs: 3_600_000 });
      expect(await after.get('cron:digest')).toMatchObject({ cron: '0 9 * * *' });
      await removed.close();
    });
  });
});
