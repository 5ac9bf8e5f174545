import { Injectable, Logger, type Type } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { waitFor } from '@sundial/testing/harness';
import { registrarOnRedis } from '../../../../test/client/registrar-on-redis';
import { CronRegistrar, DistributedCron, DistributedInterval, SundialModule, Timers } from '../index';

@Injectable()
class FastBeat {
  @DistributedInterval('fast', 50)
  beat(): void {}
}

/** The digest of a news app, in three builds: its zone changed, then its name. */
@Injectable()
class Digest {
  @DistributedCron('digest', '0 9 * * *', { timeZone: 'Europe/Paris' })
  send(): void {}
}
@Injectable()
class TorontoDigest {
  @DistributedCron('digest', '0 9 * * *', { timeZone: 'America/Toronto' })
  send(): void {}
}
@Injectable()
class RenamedDigest {
  @DistributedCron('daily-digest', '0 9 * * *', { timeZone: 'America/Toronto' })
  send(): void {}
}

/** A jitter an older release accepted: longer than the minute between the slots (docs/spec.md §3.3c). */
@Injectable()
class JitteryTick {
  @DistributedCron('tick', '* * * * *', { timeZone: 'UTC', jitter: '2m' })
  tick(): void {}
}

describe('the @DistributedCron / @DistributedInterval registrar: edge cases', () => {
  it("stops the boot on a cron's jitter not shorter than its slots' gap, naming the decorator", async () => {
    const app = await Test.createTestingModule({
      imports: [SundialModule.forRoot({ backend: 'memory' })],
      providers: [JitteryTick],
    }).compile();
    const refused = await app.init().then(
      () => 'booted',
      (error: unknown) => error,
    );
    await app.close();
    expect(refused).toMatchObject({ reason: 'invalid', field: 'jitter', fix: expect.stringContaining('1m') });
    expect((refused as Error).message).toMatch(/JitteryTick\.tick[\s\S]*the 1 min between this cron's slots/);
  });

  /**
   * An app whose `limits.minEveryMs` allows a period under the default minimum (100 ms): the registrar
   * compared the stored row with the decorator by normalizing it with the default limits, so the pass
   * after the first (a second boot, a reset with the row still there, a look) refused the row the
   * backend had accepted, and the boot stopped.
   */
  it("checks and compares a row with the app's own limits: a second pass over a 50 ms interval writes nothing", async () => {
    const app = await Test.createTestingModule({
      imports: [SundialModule.forRoot({ backend: 'memory', limits: { minEveryMs: 10 } })],
      providers: [FastBeat],
    }).compile();
    try {
      await app.init();
      const timers = app.get(Timers);
      const first = await timers.get('interval:fast');
      expect(first).toMatchObject({ everyMs: 50, version: 1 });
      await app.get(CronRegistrar).sync();
      expect(await timers.get('interval:fast')).toMatchObject({ id: first?.id, version: 1 });
    } finally {
      await app.close();
    }
  });
});

describe('the registrar after a reset', () => {
  afterEach(() => jest.restoreAllMocks());

  /**
   * The rows written again after a global cancelAll can be refused (here an API timer took the key in
   * between; on Redis also an ACL, OOM): the listener dropped the error, so on the memory backend the row
   * stayed gone and nothing said so.
   */
  it('says so when a row cannot be written again, naming the decorator and the reason', async () => {
    const app = await Test.createTestingModule({
      imports: [SundialModule.forRoot({ backend: 'memory' })],
      providers: [Digest],
    }).compile();
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    try {
      const timers = app.get(Timers);
      // before the registrar's own listener (its init adds it): the key taken before its pass reads it
      timers.on('reset', () => void timers.schedule({ key: 'cron:digest', handler: 'digest', every: '1h' }));
      await app.init();
      await timers.cancelAll();
      await waitFor(() => errors.mock.calls.length > 0, { timeoutMs: 2_000, what: 'the refusal said' }); // deadline
      expect(errors.mock.calls.map(([message]) => message)).toEqual([
        expect.stringMatching(
          /^appName 'app': the @DistributedCron\/@DistributedInterval rows were not written again after a reset: .*@DistributedCron\('digest'\) on Digest\.send: the key cron:digest holds a timer this app did not create/,
        ),
      ]);
      expect(await timers.get('cron:digest')).toMatchObject({ kind: 'interval', meta: undefined });
    } finally {
      await app.close();
    }
  });
});

/** Cases the audit found right on Redis; kept so that they stay so. */
describe('the registrar through redeploys, beside an API timer with a similar key', () => {
  const redisApps = registrarOnRedis('edges');
  afterEach(() => jest.restoreAllMocks());

  it('a zone changed replaces the row, a rename moves it; the API timer is never touched', async () => {
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const boot = (provider: Type) => redisApps.boot([provider], { appName: 'news' });
    const replicas = await Promise.all([boot(Digest), boot(Digest)]);
    const timers = replicas[0].get(Timers);
    const api = await timers.schedule({ key: 'cron:digest.api', handler: 'digest', every: '1h' });
    const rows = async (app: TestingModule) =>
      (await app.get(Timers).list({ prefix: 'cron:' })).items.map((row) => [row.key, row.tz ?? null, row.id]);
    const first = await rows(replicas[1]);
    expect(first).toEqual([
      ['cron:digest', 'Europe/Paris', expect.any(String)],
      ['cron:digest.api', null, api.id],
    ]);
    await Promise.all(replicas.map((app) => app.close()));

    const toronto = await boot(TorontoDigest);
    const moved = await rows(toronto);
    expect(moved).toEqual([
      ['cron:digest', 'America/Toronto', expect.any(String)],
      ['cron:digest.api', null, api.id],
    ]);
    expect(moved[0][2]).not.toBe(first[0][2]);
    await toronto.close();

    const renamed = await boot(RenamedDigest);
    expect(await rows(renamed)).toEqual([
      ['cron:daily-digest', 'America/Toronto', expect.any(String)],
      ['cron:digest.api', null, api.id],
    ]);
    await renamed.close();
  });
});
