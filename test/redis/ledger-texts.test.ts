import { useFirePath } from './fire-fixture';

const fire = useFirePath();

/**
 * The ledger entries of a reschedule, a cancel and a pause are joined from texts (docs/design.md §
 * Performance, "Churn p99": cjson.encode of an entry's table printed its numbers with printf, ~3k Redis
 * instructions each, and the table and encoder cost more). Joined entries have one field order — `a`,
 * `e`, `v`, then the rest — as the fire path's (`armed_entry`, `completed_entry`); cjson's order is its
 * hash order (`{"a":…,"d":…,"e":"rescheduled","v":2}`). What readers parse must not change.
 */
describe('ledger entry texts of a reschedule, a cancel and a pause', () => {
  it('a reschedule writes the implied `scheduled` entry and its own, joined from the row’s texts', async () => {
    const cluster = await fire.cluster();
    const due = (await cluster.redisNow()) + 3_600_000;
    const [timer] = await cluster.timers.scheduleMany([{ key: 'moved', handler: 'h', at: due }]);
    await cluster.timers.reschedule('moved', { at: due + 1_000 });

    const moved = await cluster.timers.get('moved');
    expect(await fire.raw.lrange(cluster.timers.keys.ledger('moved'), 0, -1)).toEqual([
      `{"a":${moved?.scheduledAt},"e":"rescheduled","v":2,"d":${due + 1_000}}`,
      `{"a":${timer.scheduledAt},"e":"scheduled","v":1}`,
    ]);
    const history = await cluster.timers.history('moved');
    expect(history.map(({ event, version, due: at }) => [event, version, at])).toEqual([
      ['rescheduled', 2, new Date(due + 1_000).toISOString()],
      ['scheduled', 1, undefined],
    ]);
  });

  it('a cancel, a pause and a replace write their entries with their reasons, joined', async () => {
    const cluster = await fire.cluster();
    const due = (await cluster.redisNow()) + 3_600_000;
    await cluster.timers.scheduleMany([
      { key: 'gone', handler: 'h', at: due },
      { key: 'held', handler: 'h', at: due },
      { key: 'swapped', handler: 'h', at: due },
    ]);
    await cluster.timers.cancel('gone');
    await cluster.timers.pause('held');
    await cluster.timers.schedule({ key: 'swapped', handler: 'h', at: due, ifExists: 'replace' });

    const newest = async (key: string) => (await fire.raw.lrange(cluster.timers.keys.ledger(key), 0, 0))[0];
    expect(await newest('gone')).toMatch(/^\{"a":\d{13},"e":"cancelled","v":2,"r":"cancelled"\}$/);
    expect(await newest('held')).toMatch(/^\{"a":\d{13},"e":"paused","v":2\}$/);
    expect(await fire.raw.lrange(cluster.timers.keys.ledger('swapped'), 0, -1)).toEqual([
      expect.stringMatching(/^\{"a":\d{13},"e":"scheduled","v":1\}$/),
      expect.stringMatching(/^\{"a":\d{13},"e":"replaced","v":2\}$/),
      expect.stringMatching(/^\{"a":\d{13},"e":"scheduled","v":1\}$/),
    ]);
    const story = async (key: string) =>
      (await cluster.timers.history(key)).map(({ event, version, reason }) => [event, version, reason]);
    expect(await story('gone')).toEqual([
      ['cancelled', 2, 'cancelled'],
      ['scheduled', 1, undefined],
    ]);
    expect(await story('held')).toEqual([
      ['paused', 2, undefined],
      ['scheduled', 1, undefined],
    ]);
  });
});
