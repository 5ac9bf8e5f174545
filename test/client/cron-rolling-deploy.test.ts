import { Injectable, Logger } from '@nestjs/common';
import type { TestingModule } from '@nestjs/testing';
import { DistributedCron, DistributedInterval, Timers } from '@sundial/client';
import { waitFor } from '@sundial/testing/harness';
import { RedisTimers } from '@sundial/redis';
import { Redis } from 'ioredis';
import { registrarOnRedis } from './registrar-on-redis';

// docs/spec.md §5.1 "rolling deploy": during a roll, replicas of two builds of one app run side by side;
// only the replicas of the newest declaration set write the @DistributedCron / @DistributedInterval rows.

/** The build running before the deploy. */
@Injectable()
class OldBuild {
  @DistributedCron('report', '0 9 * * *')
  report(): void {}
}

/** The build being rolled out: the report moved to 18:00, and a new cron and interval. */
@Injectable()
class NewBuild {
  @DistributedCron('report', '0 18 * * *')
  report(): void {}

  @DistributedCron('cleanup', '*/5 * * * *')
  cleanup(): void {}

  @DistributedInterval('beat', '1h')
  beat(): void {}
}

const REFRESH_MS = 1_000; // an announcement lasts three periods (3 s): longer than a loaded host stalls

describe('@DistributedCron rows through a rolling deploy (docs/spec.md §5.1)', () => {
  const redisApps = registrarOnRedis('roll');
  const apps: TestingModule[] = [];
  const boot = (provider: typeof OldBuild | typeof NewBuild) =>
    redisApps.boot([provider], { appName: 'billing', cronRefreshMs: REFRESH_MS, into: apps });
  let raw: Redis;
  let info: jest.SpyInstance;

  beforeEach(() => {
    raw = new Redis(redisApps.url());
    info = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    raw.disconnect();
    jest.restoreAllMocks();
  });

  /** The rows as [key, cron or period]. */
  const rows = async (timers: Timers) => {
    const { items } = await timers.list();
    return items.map((row) => [row.key, row.cron ?? row.everyMs]);
  };
  const NEW_ROWS = [
    ['cron:cleanup', '*/5 * * * *'],
    ['cron:report', '0 18 * * *'],
    ['interval:beat', 3_600_000],
  ];

  /** Resolves once every set announced now has been announced again twice (each replica looked twice). */
  const twoLooks = async () => {
    const key = `${redisApps.prefix()}:cron-sets:billing`;
    const lastsOf = async () =>
      Object.entries(await raw.hgetall(key))
        .filter(([field]) => field.startsWith('s:'))
        .map(([, value]) => Number(value.split(':')[1]));
    const before = Math.max(...(await lastsOf()));
    // deadline
    await waitFor(async () => Math.min(...(await lastsOf())) >= before + REFRESH_MS, {
      timeoutMs: 10_000, // deadline
      what: 'two announcements of every replica',
    });
  };

  it('an older replica booting mid-roll writes nothing; once the newer replicas are gone (rollback) the rows follow it', async () => {
    const old = await boot(OldBuild);
    const timers = old.get(Timers);
    expect(await rows(timers)).toEqual([['cron:report', '0 9 * * *']]);

    await boot(NewBuild);
    expect(await rows(timers)).toEqual(NEW_ROWS);

    // An old replica (re)boots mid-roll (a crash-loop restart, a scale-up): the new cron stays, the
    // report keeps its new expression, at its boot and at its later looks.
    info.mockClear();
    const restarted = await boot(OldBuild);
    expect(await rows(timers)).toEqual(NEW_ROWS);
    const said = info.mock.calls
      .map(([message]) => String(message))
      .filter((line) => line.includes('@Distributed'));
    expect(said).toEqual([
      expect.stringMatching(
        /^appName 'billing': this replica's @DistributedCron\/@DistributedInterval declarations \(set [0-9a-f]{12}\) defer to a newer declaration set/,
      ),
    ]);
    await twoLooks();
    expect(await rows(timers)).toEqual(NEW_ROWS);

    // Rollback: every new-build replica closed. The old ones find their set the newest at a later look.
    const newer = apps.splice(1, 1);
    await newer[0].close();
    // deadline: three periods for the newer announcement to lapse, one for the next look
    const rolledBack = await waitFor(
      async () => {
        const now = await rows(restarted.get(Timers));
        return now.length === 1 && now;
      },
      { timeoutMs: 10_000, what: 'the rows of the old build' }, // deadline
    );
    expect(rolledBack).toEqual([['cron:report', '0 9 * * *']]);

    // Rolled forward again: the new build is the newer set again and writes at its boot.
    await boot(NewBuild);
    expect(await rows(timers)).toEqual(NEW_ROWS);
    await twoLooks();
    expect(await rows(timers)).toEqual(NEW_ROWS);
  });

  it('a redeploy of one build still replaces and removes at boot, its previous replicas just closed', async () => {
    const before = await boot(NewBuild);
    expect(await rows(before.get(Timers))).toEqual(NEW_ROWS);
    await apps.splice(0).at(0)!.close();

    // The new build's announcement still lasts: the next build is newer all the same.
    const after = await boot(OldBuild);
    expect(await rows(after.get(Timers))).toEqual([['cron:report', '0 9 * * *']]);
  });

  it('a reset mid-roll (a global cancelAll, as after a data loss): only the newer replicas write the rows again', async () => {
    const old = await boot(OldBuild);
    const newer = await boot(NewBuild);
    await newer.get(Timers).cancelAll(); // a reset, as after Redis lost its data
    // deadline
    await waitFor(async () => (await rows(old.get(Timers))).length === 3, {
      timeoutMs: 10_000, // deadline
      what: "the newer build's rows written again",
    });
    await twoLooks();
    expect(await rows(old.get(Timers))).toEqual(NEW_ROWS);
  });

  it('passes of two sets that may have crossed (both replicas passing at once, as after a data loss) are undone: the newest passes again', async () => {
    const client = new RedisTimers({ connection: redisApps.url(), prefix: redisApps.prefix() });
    try {
      const turn = (set: string, step: 'boot' | 'refresh' | 'done' | 'failed') =>
        client.declarationTurn('billing', set, step, 60_000);
      expect(await turn('aaaa', 'boot')).toMatchObject({ newest: 'aaaa', pass: true }); // an old replica first
      expect(await turn('bbbb', 'boot')).toMatchObject({ newest: 'bbbb', pass: true }); // then the newer set
      expect(await turn('aaaa', 'refresh')).toMatchObject({ newest: 'bbbb', pass: false });
      // The old pass ends first, the newer one after it: the old one's last write may still have landed
      // after the newer one's (each row is read, then written).
      await turn('aaaa', 'done');
      await turn('bbbb', 'done');
      expect(await turn('aaaa', 'refresh')).toMatchObject({ newest: 'bbbb', pass: false });
      expect(await turn('bbbb', 'refresh')).toMatchObject({ newest: 'bbbb', pass: true });
      await turn('bbbb', 'done');
      expect(await turn('bbbb', 'refresh')).toMatchObject({ pass: false });
      // A pass that stopped half way is run again at the next look.
      await turn('bbbb', 'failed');
      expect(await turn('bbbb', 'refresh')).toMatchObject({ pass: true });
    } finally {
      await client.dispose();
    }
  });
});
