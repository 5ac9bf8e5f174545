import { useStore } from './store-fixture';

const store = useStore();
const HOUR = 3_600_000;
const at = (ms: number) => new Date(ms).toISOString();

/**
 * `next` on Redis while what was asked waits for a worker's claim (docs/spec.md §3.9): a trigger's run
 * (`tg`, due now) comes before the armed due and takes a run of maxRuns — the engine starts it at once,
 * so only Redis shows this state; a backfill's slots run before the schedule goes on; slots gone past
 * unrun (libs/core/src/next-late.spec.ts on the engine). No runner here: nothing claims, so the row
 * stays as the write left it.
 */
describe('next of a trigger or a backfill not claimed yet, on Redis', () => {
  it('lists a pending trigger’s run first, counted toward maxRuns', async () => {
    const timers = store.open();
    const timer = await timers.schedule({ key: 't', handler: 'h', every: '1h', maxRuns: 2 });
    await timers.trigger('t');
    const row = await store.raw.hgetall(timers.keys.row('t'));
    expect(row.s ?? 'pending').toBe('pending');
    // the trigger's run, then the armed due: the two runs maxRuns allows
    const next = await timers.next('t', { count: 5 });
    expect(next.map((time) => time.at)).toEqual([at(Number(row.tg)), at(timer.dueAt)]);
    expect((await timers.describe('t', { count: 5 })).next).toEqual(next);
  });

  it('lists a pending backfill’s slots, then the slot the schedule goes back to', async () => {
    const timers = store.open();
    const timer = await timers.schedule({ key: 'b', handler: 'h', every: '1h', jitter: '10m' });
    const anchor = timer.scheduledAt;
    expect(await timers.backfill('b', { from: anchor - 2 * HOUR, to: anchor - HOUR })).toEqual({ slots: 2 });
    // each backfill slot due at itself, then the armed slot at its jittered due, then the grid
    const next = await timers.next('b', { count: 3 });
    expect(next.map((time) => time.at)).toEqual([at(anchor - 2 * HOUR), at(anchor - HOUR), at(timer.dueAt)]);
  });

  it('lists what runs of slots gone past unrun: the late one (or none, skip), then after now', async () => {
    const timers = store.open();
    for (const [key, catchup] of [
      ['once', undefined],
      ['skip', 'skip'],
    ] as const) {
      await timers.schedule({ key, handler: 'h', every: '1h', ...(catchup && { catchup }) });
      // as if created 3.5 h ago with nothing run since: what Redis holds after an outage
      const row = timers.keys.row(key);
      const [sa, d] = (await store.raw.hmget(row, 'sa', 'd')).map(Number);
      await store.raw.hset(row, 'sa', sa - 3.5 * HOUR, 'd', d - 3.5 * HOUR);
      const hours = async () =>
        (await timers.next(key, { count: 3 })).map(
          (time) => (Date.parse(time.at) - (sa - 3.5 * HOUR)) / HOUR,
        );
      expect(await hours()).toEqual(catchup ? [4, 5, 6] : [1, 4, 5]);
    }
  });
});
