import { Injectable, Logger, type Type } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { type TimerContext, VirtualClock } from '@sundial/core';
import { waitFor } from '@sundial/testing/harness';
import { type DataLoss, watchPartitionCount } from '@sundial/redis';
import { Redis } from 'ioredis';
import { registrarOnRedis } from '../../../../test/client/registrar-on-redis';
import { CronRegistrar, DistributedCron, DistributedInterval, SundialModule, Timers } from '../index';

const runs: number[] = [];

@Injectable()
class DailyDigest {
  @DistributedCron('digest', '0 9 * * *', { timeZone: 'Europe/Paris' })
  send(_payload: unknown, ctx: TimerContext): void {
    runs.push(ctx.due);
  }

  // kept by the same registrar: each test of the rows' life below covers it too
  @DistributedInterval('digest.progress', '1h')
  progress(): void {}
}

@Injectable()
class EveningDigest {
  @DistributedCron('digest', '0 18 * * *', { timeZone: 'Europe/Paris' })
  send(): void {}
}

@Injectable()
class ConfiguredDigest {
  @DistributedCron('digest', { config: 'DIGEST_CRON' })
  send(): void {}
}

@Injectable()
class OverlappingDigest {
  @DistributedCron('digest', '* * * * *', { waitForCompletion: false })
  send(): void {}
}

@Injectable()
class ContradictoryDigest {
  @DistributedCron('digest', '* * * * *', { waitForCompletion: false, overlap: 'buffer-one' })
  send(): void {}
}

@Injectable()
class CatchingUpDigest {
  @DistributedCron('digest', '0 9 * * *', {
    timeZone: 'Europe/Paris',
    catchup: 'all',
    catchupWindow: '2d',
    retry: { attempts: 3, backoff: { type: 'fixed', delay: '1m' } },
  })
  send(): void {}
}

@Injectable()
class NoCron {}

/** An older build of DailyDigest's app during a rolling deploy: the digest's @DistributedCron not yet in it. */
@Injectable()
class ProgressOnly {
  @DistributedInterval('digest.progress', '1h')
  progress(): void {}
}

@Injectable()
class DisabledDigest {
  @DistributedCron('digest', '30 7 * * 1', { disabled: true })
  send(): void {}
}

/** `provider` in an app on the memory backend, compiled, not yet initialised. */
const onMemory = (provider: Type, clock?: VirtualClock): Promise<TestingModule> =>
  Test.createTestingModule({
    imports: [SundialModule.forRoot({ backend: 'memory', clock })],
    providers: [provider],
  }).compile();

describe('@DistributedCron', () => {
  it('memory backend: one row per name, one run per slot on the virtual clock', async () => {
    runs.length = 0;
    const clock = new VirtualClock(Date.parse('2026-03-01T00:00:00Z'));
    const app = await onMemory(DailyDigest, clock);
    await app.init();
    expect(await app.get(Timers).get('cron:digest')).toMatchObject({
      kind: 'cron',
      handler: 'digest',
      cron: '0 9 * * *',
      tz: 'Europe/Paris',
      meta: { sundialOwner: 'distributed-cron', sundialApp: 'app' },
    });
    await clock.advance('3d');
    expect(runs.map((due) => new Date(due).toISOString())).toEqual([
      '2026-03-01T08:00:00.000Z',
      '2026-03-02T08:00:00.000Z',
      '2026-03-03T08:00:00.000Z',
    ]);
    await app.close();
  });

  it("waitForCompletion: false is a row with overlap 'allow' (runs may overlap)", async () => {
    const app = await onMemory(OverlappingDigest);
    await app.init();
    expect(await app.get(Timers).get('cron:digest')).toMatchObject({ overlap: 'allow', awaitTask: false });
    await app.close();
  });

  it('refuses waitForCompletion: false beside another overlap at boot, naming the method', async () => {
    const app = await onMemory(ContradictoryDigest);
    const refused = await app.init().catch((error: unknown) => error);
    expect(refused).toMatchObject({ reason: 'invalid', field: 'waitForCompletion' });
    expect((refused as Error).message).toContain("@DistributedCron('digest') on ContradictoryDigest.send");
    expect((refused as { fix: string }).fix).toContain("overlap: 'allow'");
    expect(await app.get(Timers).get('cron:digest')).toBeNull();
    await app.get(Timers).dispose();
  });

  describe('with Redis: replicas and redeploys', () => {
    const redisApps = registrarOnRedis('c');
    const boot = (provider: Type, into: TestingModule[] = [], appName?: string) =>
      redisApps.boot([provider], { config: { DIGEST_CRON: '30 7 * * 1' }, appName, into });

    it('three replicas booting at once leave exactly one row', async () => {
      const apps: TestingModule[] = [];
      await Promise.all([boot(DailyDigest, apps), boot(DailyDigest, apps), boot(DailyDigest, apps)]);
      const { items } = await apps[0].get(Timers).list({ prefix: 'cron:' });
      expect(items.map((row) => [row.key, row.version])).toEqual([['cron:digest', 1]]);
      const intervals = await apps[0].get(Timers).list({ prefix: 'interval:' });
      expect(intervals.items.map((row) => [row.key, row.version])).toEqual([['interval:digest.progress', 1]]);
      // this app's rows, with their next runs (SchedulerRegistry.getCronJobs())
      const rows = await apps[1].get(CronRegistrar).rows();
      expect(rows.map((row) => [row.key, row.dueAt > Date.now()])).toEqual([
        ['cron:digest', true],
        ['interval:digest.progress', true],
      ]);
      await Promise.all(apps.map((app) => app.close()));
    });

    it('a redeploy follows the decorator: policies, expression, from config, removed; API timers untouched', async () => {
      const first = await boot(DailyDigest);
      const timers = first.get(Timers);
      const created = await timers.get('cron:digest');
      // An API-created timer with a similar key, and one under the cron prefix without the marker.
      await timers.schedule({ key: 'cron:digest.api', handler: 'digest', cron: '0 9 * * *', tz: 'UTC' });
      await timers.schedule({ key: 'digest', handler: 'digest', every: '1h' });
      await first.close();

      const same = await boot(DailyDigest);
      expect(await same.get(Timers).get('cron:digest')).toMatchObject({ id: created?.id, version: 1 });
      await same.close();

      const policies = await boot(CatchingUpDigest);
      const replaced = await policies.get(Timers).get('cron:digest');
      expect(replaced?.id).not.toBe(created?.id);
      expect(replaced).toMatchObject({
        cron: '0 9 * * *',
        catchup: 'all',
        catchupWindow: 2 * 86_400_000,
        retry: { attempts: 3, backoff: { type: 'fixed', delay: 60_000 } },
      });
      await policies.close();

      const samePolicies = await boot(CatchingUpDigest);
      expect(await samePolicies.get(Timers).get('cron:digest')).toMatchObject({
        id: replaced?.id,
        version: 1,
      });
      await samePolicies.close();

      const changed = await boot(EveningDigest);
      expect(await changed.get(Timers).get('cron:digest')).toMatchObject({ cron: '0 18 * * *' });
      await changed.close();

      const configured = await boot(ConfiguredDigest);
      expect(await configured.get(Timers).get('cron:digest')).toMatchObject({
        cron: '30 7 * * 1',
        tz: 'UTC',
      });
      await configured.close();

      // Another service on the same Redis that declares no cron and names no app (an API that only
      // schedules): under the default appName it could be the crons' app or not, and leaves them alone.
      const api = await boot(NoCron);
      expect(await api.get(Timers).get('cron:digest')).toMatchObject({ cron: '30 7 * * 1' });
      await api.close();

      const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      const removed = await boot(DisabledDigest);
      const after = removed.get(Timers);
      expect(await after.get('cron:digest')).toBeNull();
      // Said, as it is also what a service does to another's rows under the same appName.
      expect(warn.mock.calls.map(([message]) => message)).toEqual([
        expect.stringMatching(
          /^removed cron:digest: its @DistributedCron\('digest'\) is gone from this app or disabled \(appName 'app'\)/,
        ),
      ]);
      warn.mockRestore();
      expect(await after.get('cron:digest.api')).toMatchObject({ cron: '0 9 * * *' });
      expect(await after.get('digest')).toMatchObject({ kind: 'interval' });
      await removed.close();
    });

    it('an app with an appName of its own removes its rows when its last decorator is gone', async () => {
      const first = await boot(DailyDigest, [], 'billing');
      expect(await first.get(Timers).get('cron:digest')).toMatchObject({ meta: { sundialApp: 'billing' } });
      await first.close();
      const other = await boot(NoCron, [], 'shipping');
      expect(await other.get(Timers).get('cron:digest')).not.toBeNull();
      await other.close();
      const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      const removed = await boot(NoCron, [], 'billing');
      expect(await removed.get(Timers).get('cron:digest')).toBeNull();
      expect(await removed.get(Timers).get('interval:digest.progress')).toBeNull();
      expect(warn).toHaveBeenCalledTimes(2);
      warn.mockRestore();
      await removed.close();
    });

    it('an API timer under the exact key stops the boot instead of being overwritten', async () => {
      const apps: TestingModule[] = [];
      const plain = await boot(NoCron, apps);
      await plain.get(Timers).schedule({ key: 'cron:digest', handler: 'other', every: '1h' });
      const app = await Test.createTestingModule({
        imports: [SundialModule.forRoot({ connection: redisApps.url(), prefix: redisApps.prefix() })],
        providers: [DailyDigest],
      }).compile();
      const refused = await app.init().catch((error: unknown) => error);
      expect(refused).toMatchObject({ reason: 'invalid', field: 'key' });
      expect(await plain.get(Timers).get('cron:digest')).toMatchObject({ handler: 'other' });
      await app.get(Timers).dispose();
      await plain.close();
    });

    it('re-registers its rows after a global cancelAll (reset)', async () => {
      const app = await boot(DailyDigest);
      const timers = app.get(Timers);
      await timers.cancelAll();
      const row = await waitFor(() => timers.get('cron:digest').then((timer) => timer ?? undefined), {
        what: 'the row registered again',
      });
      expect(row).toMatchObject({ cron: '0 9 * * *', status: 'pending' });
      const interval = await waitFor(
        () => timers.get('interval:digest.progress').then((timer) => timer ?? undefined),
        { what: 'the interval row registered again' },
      );
      expect(interval).toMatchObject({ everyMs: 3_600_000, status: 'pending' });
      await app.close();
    });

    it('re-registers its rows after Redis lost its data, on the reset the layout watch publishes', async () => {
      const app = await boot(DailyDigest);
      const timers = app.get(Timers);
      const losses: DataLoss[] = [];
      const stop = await watchPartitionCount({
        connection: redisApps.url(),
        prefix: redisApps.prefix(),
        onReplaced: () => undefined,
        onDataLost: (loss) => losses.push(loss),
      });
      const raw = new Redis(redisApps.url());
      try {
        // the watch has read the marker (it resolves once its first look is done) before the data goes
        await raw.del(...(await raw.keys(`${redisApps.prefix()}:*`))); // what a restart without persistence leaves
        await waitFor(() => losses.length > 0, { timeoutMs: 10_000, what: 'the watch to notice the loss' });
        const row = await waitFor(() => timers.get('cron:digest').then((timer) => timer ?? undefined), {
          what: 'the row registered again',
        });
        expect(row).toMatchObject({ cron: '0 9 * * *', status: 'pending' });
        // written after the cron's, in the same pass
        const interval = await waitFor(
          () => timers.get('interval:digest.progress').then((timer) => timer ?? undefined),
          { what: 'the interval row registered again' },
        );
        expect(interval).toMatchObject({ everyMs: 3_600_000 });
      } finally {
        raw.disconnect();
        await stop();
        await app.close();
      }
    });

    it("a reset during a rolling deploy: an older replica's turn removes none of the newer build's rows", async () => {
      const older = await boot(ProgressOnly, [], 'billing');
      const newer = await boot(DailyDigest, [], 'billing');
      const timers = newer.get(Timers);
      await timers.cancelAll(); // a reset, as after Redis lost its data
      // both of the newer build's rows: the interval's is written after the cron's, in the same pass
      for (const key of ['cron:digest', 'interval:digest.progress'])
        await waitFor(() => timers.get(key).then((timer) => timer ?? undefined), {
          what: `the newer build's row ${key} registered again`,
        });
      // The older replica's turn comes last (the order the race may take): it used to remove the cron as an
      // orphan; it defers to the newer declaration set now (test/client/cron-rolling-deploy.test.ts).
      const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
      await older.get(CronRegistrar).afterReset();
      warn.mockRestore();
      expect(await timers.get('cron:digest')).toMatchObject({ cron: '0 9 * * *', status: 'pending' });
      expect(await timers.get('interval:digest.progress')).toMatchObject({ everyMs: 3_600_000 });
      await Promise.all([older.close(), newer.close()]);
    });

    it('an app without crons does not listen on the events channel (every script would publish to it)', async () => {
      const subscribers = async () => {
        const client = new Redis(redisApps.url());
        const [, count] = (await client.pubsub('NUMSUB', `${redisApps.prefix()}:events`)) as [string, number];
        client.disconnect();
        return count;
      };
      const withCron = await boot(DailyDigest);
      expect(await subscribers()).toBe(1);
      await withCron.close();
      const without = await boot(NoCron);
      await without.get(Timers).schedule({ key: 'k', handler: 'h', delay: '1h' });
      expect(await subscribers()).toBe(0);
      await without.close();
    });
  });
});
