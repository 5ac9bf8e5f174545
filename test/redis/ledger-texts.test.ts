import { type FireCluster, useFirePath } from './fire-fixture';

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

/**
 * A held claim keeps its hand-off's implied entries and its `claimed` entry on the row (`lq`, includes/
 * ledger-entries ledger_keep_claimed: a first hand-off's and a row keeping nothing joined in one
 * concatenation). The text is what readers and the release before parse: oldest first, one per line.
 */
describe('the entries a held claim keeps (`lq`)', () => {
  const kept = async (cluster: FireCluster, key: string) =>
    (await fire.raw.hget(cluster.timers.keys.row(key), 'lq'))?.split('\n');
  const armedAt = async (cluster: FireCluster, key: string) =>
    fire.raw.zscore(cluster.timers.keys.armed(0), key);
  /** Hands what is due off and claims it (worker `w "q"`); returns `key`'s hand-off ms (its `armed` score). */
  const handOffAndClaim = async (cluster: FireCluster, key: string) => {
    const job = (await cluster.commands.takeDue(0, 100, 1_000)).job!;
    const at = await armedAt(cluster, key);
    await cluster.commands.claim(0, 30_000, 'w "q"', job.timers, false, 1_000);
    return at;
  };
  const claimedRe = (v: number, due: number) =>
    new RegExp(`^\\{"a":\\d{13},"e":"claimed","v":${v},"w":"w \\\\"q\\\\"","d":${due}\\}$`);

  it('a first hand-off: the implied `scheduled` and `armed` entries, then `claimed`', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({ key: 'first', handler: 'h', delay: 0 });
    const at = await handOffAndClaim(cluster, 'first');
    expect(await kept(cluster, 'first')).toEqual([
      `{"a":${timer.scheduledAt},"e":"scheduled","v":1}`,
      `{"a":${at},"e":"armed","v":1,"d":${timer.dueAt}}`,
      expect.stringMatching(claimedRe(1, timer.dueAt)),
    ]);
  });

  it('a later run keeping nothing: its `armed` entry, then `claimed`', async () => {
    const cluster = await fire.cluster();
    await cluster.timers.schedule({ key: 'again', handler: 'h', every: 60_000 });
    const now = await cluster.redisNow();
    // its second run due now: the first ran and completed
    await fire.raw.hset(cluster.timers.keys.row('again'), 'v', '2', 'rc', '1', 'd', String(now));
    await fire.raw.zadd(cluster.timers.keys.due(0), now, 'again');
    const at = await handOffAndClaim(cluster, 'again');
    expect(await kept(cluster, 'again')).toEqual([
      `{"a":${at},"e":"armed","v":2,"d":${now}}`,
      expect.stringMatching(claimedRe(2, now)),
    ]);
  });

  it('a row keeping entries (a re-armed hand-off): those, the new `armed` entry, then `claimed`', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({ key: 'rearmed', handler: 'h', delay: 0 });
    await cluster.commands.takeDue(0, 100, 1_000);
    const lost = await armedAt(cluster, 'rearmed');
    // no BullMQ job was added: the reconciler re-arms it, keeping that hand-off's entries on the row
    await cluster.reconciler({ graceMs: 0 }).reconcileOnce();
    const at = await handOffAndClaim(cluster, 'rearmed');
    expect(await kept(cluster, 'rearmed')).toEqual([
      `{"a":${timer.scheduledAt},"e":"scheduled","v":1}`,
      `{"a":${lost},"e":"armed","v":1,"d":${timer.dueAt}}`,
      `{"a":${at},"e":"armed","v":1,"d":${timer.dueAt}}`,
      expect.stringMatching(claimedRe(1, timer.dueAt)),
    ]);
  });
});
