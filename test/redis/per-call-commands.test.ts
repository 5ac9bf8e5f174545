import type { FireCommands } from '@sundial/redis';
import { commandCalls, useFirePath } from './fire-fixture';

const fire = useFirePath();

type Completions = Parameters<FireCommands['complete']>[1];

/**
 * The fire path's commands a call sends whatever its size (docs/design.md "Commands per fired timer"):
 * each one a call can leave out is a command per call less, the larger part at small calls. Counted by
 * INFO commandstats on the suite's private Redis.
 */
describe('fire path: commands per call', () => {
  it('a claim reads the `armed` scores only once a ref may fold its hand-off: none when all are early', async () => {
    const cluster = await fire.cluster();
    const now = await cluster.redisNow();
    await cluster.timers.scheduleMany([
      { key: 'due', handler: 'h', at: now - 1_000 },
      { key: 'later', handler: 'h', at: now + 60_000 },
    ]);
    const job = (await cluster.commands.takeDue(0, 100, 120_000)).job!;
    const [due, later] = job.timers;

    await fire.raw.config('RESETSTAT');
    const [early] = await cluster.commands.claim(0, 30_000, 'w', [later]);
    expect(early).toMatchObject({ kind: 'early' });
    expect((await commandCalls(fire.raw, 'zmscore')) + (await commandCalls(fire.raw, 'zscore'))).toBe(0);

    // an early ref before a due one: one read for the call, and the hand-off still in the ledger
    const [stillEarly, claimed] = await cluster.commands.claim(0, 30_000, 'w', [later, due]);
    expect([stillEarly.kind, claimed.kind]).toEqual(['early', 'claimed']);
    expect((await commandCalls(fire.raw, 'zmscore')) + (await commandCalls(fire.raw, 'zscore'))).toBe(1);
    await cluster.commands.complete(0, [
      { id: due.id, key: 'due', version: 1, runCount: 1, mode: 'held', outcome: 'ok', missed: 0, overlap: 0 },
    ]);
    expect((await cluster.timers.history('due')).map((entry) => entry.event)).toEqual([
      'completed',
      'claimed',
      'armed',
      'scheduled',
    ]);
  });

  it('a completion whose removed ids have live neighbours clears their bits without a BITCOUNT', async () => {
    const cluster = await fire.cluster();
    const past = (await cluster.redisNow()) - 1_000;
    const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
    const scheduled = await cluster.timers.scheduleMany(
      keys.map((key, i) => ({ key, handler: 'h', at: past + i })),
    );
    const job = (await cluster.commands.takeDue(0, 100, 0)).job!;
    const claimed = await cluster.commands.claim(0, 30_000, 'w', job.timers);
    expect(claimed.every((result) => result.kind === 'claimed')).toBe(true);
    const done = (from: number, to: number): Completions =>
      job.timers.slice(from, to).map((ref) => ({
        id: ref.id,
        key: ref.key,
        version: ref.version,
        runCount: 1,
        mode: 'held',
        outcome: 'ok',
        missed: 0,
        overlap: 0,
        once: true,
      }));

    await fire.raw.config('RESETSTAT');
    // five ids: cleared in place (includes/live-ids.lua clear_bits_in_place); one: by BITFIELD
    await cluster.commands.complete(0, done(0, 5));
    await cluster.commands.complete(0, done(5, 6));
    expect(await commandCalls(fire.raw, 'bitcount')).toBe(0);
    for (const [i, timer] of scheduled.entries()) expect(await cluster.timers.check(timer.id)).toBe(i >= 6);

    // the last ones leave nothing set near them: the bitmap is counted (and kept: new ids land in it)
    await cluster.commands.complete(0, done(6, 12));
    expect(await commandCalls(fire.raw, 'bitcount')).toBe(1);
    expect(await cluster.timers.snapshot()).toEqual([]);
    expect(await fire.raw.smembers(cluster.timers.keys.idChunks(0))).toEqual(['0:0']);
  });

  it('a cancelAll with nothing in `armed` reads no armed score, for its keys with a ledger list too', async () => {
    const cluster = await fire.cluster();
    const { timers } = cluster;
    await timers.scheduleMany(
      Array.from({ length: 6 }, (_, i) => ({ key: `l:${i}`, handler: 'h', delay: '1h' })),
    );
    // three keys with a list: they take cancel-all's long way (retire_row, which folds an armed entry)
    for (const key of ['l:1', 'l:3', 'l:5']) await timers.reschedule(key, { delay: '2h' });
    expect(await fire.raw.exists(timers.keys.armed(0))).toBe(0);

    await fire.raw.config('RESETSTAT');
    expect(await timers.cancelAll('l:')).toBe(6);
    expect((await commandCalls(fire.raw, 'zmscore')) + (await commandCalls(fire.raw, 'zscore'))).toBe(0);
    expect((await timers.history('l:3')).map((entry) => entry.event)).toEqual([
      'cancelled',
      'rescheduled',
      'scheduled',
    ]);
    expect((await timers.history('l:4')).map((entry) => entry.event)).toEqual(['cancelled', 'scheduled']);
  });

  it('a bitmap behind the counter goes when its last ids are cleared, in place or by BITFIELD', async () => {
    const cluster = await fire.cluster();
    const { timers } = cluster;
    // ids 1..6 share the bitmap's first byte with each other only; then the counter moves on
    await timers.scheduleMany(
      Array.from({ length: 6 }, (_, i) => ({ key: `${i < 4 ? 'a' : 'b'}:${i}`, handler: 'h', delay: '1h' })),
    );
    await fire.raw.set(timers.keys.seq(0), 70_000);
    await timers.schedule({ key: 'c', handler: 'h', delay: '1h' });

    // four ids, in place: their neighbours 5 and 6 stay
    expect(await timers.cancelAll('a:')).toBe(4);
    expect(await fire.raw.exists(timers.keys.idBitmap(0, '0:0'))).toBe(1);
    // the last two, by BITFIELD: nothing set is left
    expect(await timers.cancelAll('b:')).toBe(2);
    expect(await fire.raw.exists(timers.keys.idBitmap(0, '0:0'))).toBe(0);
    expect(await fire.raw.smembers(timers.keys.idChunks(0))).toEqual(['0:1']);
    expect(await timers.snapshot()).toEqual(['70001p0']);
  });
});
