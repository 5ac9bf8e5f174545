import { silentLogger } from '@sundial/core';
import { RedisTimers, runScript, SundialKeys } from '@sundial/redis';
import { useFirePath } from './fire-fixture';

const fire = useFirePath();

/**
 * `history(key)` while a repartition runs (docs/design.md "Repartition"), from a client of the new count
 * that joined it: a key not moved yet — where it lies in the old layout, or between the steps of its move
 * (`m:`, `mx:`, `mh:`) — answers as it did before the repartition began (docs/spec.md §3.9): its row's kept
 * entries (a hand-off's implied `armed`, a held claim's `claimed`) and no more than the ledger holds.
 */
describe('history during a repartition', () => {
  it('of a key not moved yet, or moving, answers as before the repartition', async () => {
    const cluster = await fire.cluster({ partitions: 1 });
    const { prefix, timers, commands } = cluster;
    const target = new SundialKeys(prefix, 4);
    // keys that leave partition 0 under 4 partitions (one that stays is read at the same names)
    const [claimed, armed, long] = Array.from({ length: 40 }, (_, n) => `k:${n}`).filter(
      (key) => target.partitionOf(key) !== 0,
    );
    const due = (await cluster.redisNow()) + 100;
    await timers.scheduleMany([claimed, armed].map((key) => ({ key, handler: 'h', at: due })));
    const job = (await commands.takeDue(0, 100, 1_000)).job!; // both handed off
    await commands.claim(
      0,
      30_000,
      'w',
      job.timers.filter((ref) => ref.key === claimed),
      false,
      1_000,
    );
    // a full ledger (50 entries) and an earlier life's closed ledger: together no more than 50
    await timers.schedule({ key: long, handler: 'h', every: '1h' });
    for (let n = 0; n < 25; n++) {
      await timers.pause(long);
      await timers.resume(long);
    }
    const closed = ['scheduled', 'completed'].map((e, a) => JSON.stringify({ a, e, v: 1 }));
    await fire.raw.set(`${prefix}:{p0}:hd:${long}`, closed.join('\n'), 'PX', 3_600_000);

    const before = async (key: string) => timers.history(key, { limit: 200 });
    const expected = [await before(claimed), await before(armed), await before(long)];
    expect(expected[0].map(({ event }) => event)).toEqual(['claimed', 'armed', 'scheduled']);
    expect(expected[1].map(({ event }) => event)).toEqual(['armed', 'scheduled']);
    expect(expected[2]).toHaveLength(50);

    await fire.raw.set(
      `${prefix}:repartition`,
      JSON.stringify({ from: 1, to: 4, state: 'moving', startedAt: 1 }),
    );
    const joined = new RedisTimers({ connection: fire.url(), prefix, partitions: 4, logger: silentLogger });
    try {
      const during = async () => [
        await joined.history(claimed, { limit: 200 }),
        await joined.history(armed, { limit: 200 }),
        await joined.history(long, { limit: 200 }),
      ];
      expect(await during()).toEqual(expected);
      // between the first two steps of their move (the claimed key is busy: it stays)
      const taken = await runScript(
        fire.raw,
        'repartition-take',
        `${prefix}:{p0}:`,
        50,
        prefix,
        armed,
        long,
        claimed,
      );
      expect((taken as string[][]).map((reply) => reply[0])).toEqual(['move', 'move', 'busy']);
      expect(await fire.raw.exists(`${prefix}:{p0}:mh:${long}`)).toBe(1);
      expect(await during()).toEqual(expected);
    } finally {
      await joined.dispose();
    }
  });
});
