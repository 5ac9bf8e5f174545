/**
 * What a scope record's covered keys look like to the readers before any sweep (docs/design.md "The
 * cancelAll scope record"): the backlog gauges, list in due order and the counts count only live timers.
 */
import { Backlog } from '@sundial/redis';
import { useFirePath } from './fire-fixture';
import { scopeRecordCalls } from './scope-record-calls';

const fire = useFirePath();
const { cancelAllCall, recordsLeft } = scopeRecordCalls(fire);

describe('cancelAll scope records, read before their sweep', () => {
  it('a covered key leaves the backlog gauges at the mark: pending and overdue count live timers only', async () => {
    const cluster = await fire.cluster();
    const { timers } = cluster;
    const past = (await cluster.redisNow()) - 5_000; // due 5 s ago: overdue at once (OVERDUE_AFTER_MS 1 s)
    for (const key of ['c:1', 'c:2', 'c:3', 'o:1']) await timers.schedule({ key, handler: 'h', delay: '1h' });
    for (const key of ['c:late', 'o:late']) await timers.schedule({ key, handler: 'h', at: past });
    await timers.pause('c:3'); // paused: in no gauge before the mark either
    const backlog = new Backlog({ connection: fire.url(), prefix: cluster.prefix });
    try {
      expect([await backlog.pending(), await backlog.overdue()]).toEqual([{ 0: 5 }, { 0: 2 }]);
      // Marked, never swept (no client sweeps it): the rows are still there, their keys covered.
      expect((await cancelAllCall(cluster, 'mark', 'c:'))[0]).toBe('4');
      expect(await fire.raw.exists(timers.keys.row('c:late'))).toBe(1);
      expect(await fire.raw.zscore(timers.keys.due(0), 'c:late')).toBeNull();
      expect([await backlog.pending(), await backlog.overdue()]).toEqual([{ 0: 2 }, { 0: 1 }]);
    } finally {
      await backlog.close();
    }
  });

  it('list in due order, a second cancelAll and the live ids count the covered keys out', async () => {
    const cluster = await fire.cluster();
    const { timers } = cluster;
    const past = (await cluster.redisNow()) - 5_000;
    // c:late and o:late share a due: in due order c:late comes first (ties by key)
    for (const key of ['c:late', 'o:late']) await timers.schedule({ key, handler: 'h', at: past });
    const live = await timers.schedule({ key: 'o:1', handler: 'h', delay: '1h' });
    const covered = await timers.schedule({ key: 'c:1', handler: 'h', delay: '1h' });
    expect((await cancelAllCall(cluster, 'mark', 'c:'))[0]).toBe('2');
    // A page of two is two live timers (a covered entry in `due` would take a place and be dropped).
    const page = await timers.list({ dueBefore: past + 7_200_000, limit: 2 });
    expect(page.items.map(({ key }) => key)).toEqual(['o:late', 'o:1']);
    expect(await timers.get('c:1')).toBeNull();
    expect(await timers.cancelAll('c:')).toBe(0);
    expect(await recordsLeft(cluster.prefix)).toBe(2); // still unswept: that cancelAll marked nothing
    // The live ids: a read that meets an open record sweeps it first (timer-reads.ts), then counts.
    expect(await timers.check(covered.id)).toBe(false);
    expect(await timers.check(live.id)).toBe(true);
    expect((await timers.snapshot()).length).toBe(2);
    expect(await recordsLeft(cluster.prefix)).toBe(0);
    expect(await timers.cancelAll('')).toBe(2);
  });
});
