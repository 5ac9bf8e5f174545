/*
 * docs/spec.md §3.3c/§3.4 on the engine's virtual clock: a timer moved before its startAt (reschedule,
 * trigger) runs that one run where asked, and no slot after it comes before startAt — interval and cron,
 * under every slot and run policy — and `next` lists what fires. Both backends: test/conformance/start-at.
 */
import { harness, START } from '../../../../test/engine/harness';
import type { TimerSpec } from '../types';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const startAt = START + 5 * HOUR;

/** The policies a periodic timer can carry beside startAt (catchup 'all' needs a held run). */
const POLICIES: Array<[string, Partial<TimerSpec>]> = [
  ['no policy', {}],
  ['jitter', { jitter: '10m' }],
  ["catchup 'skip'", { catchup: 'skip' }],
  ["catchup 'all'", { catchup: 'all' }],
  ["overlap 'allow' (free runs)", { overlap: 'allow', awaitTask: false }],
  ["overlap 'cancel-other'", { overlap: 'cancel-other', awaitTask: false }],
  ["overlap 'buffer-one'", { overlap: 'buffer-one' }],
  ['endAt', { endAt: START + 9 * HOUR }],
];

const SCHEDULES: Array<[string, Partial<TimerSpec>]> = [
  ['interval', { every: '1h' }],
  ['cron', { cron: '0 * * * *', tz: 'UTC' }],
];

describe.each(SCHEDULES)('%s rescheduled before its startAt', (_kind, schedule) => {
  it.each(POLICIES)('%s: runs where asked, then at its slots from startAt on', async (_name, policy) => {
    const { engine, clock, runs, eventsOf } = harness();
    const spec = { key: 'k', handler: 'work', ...schedule, ...policy, startAt } as TimerSpec;
    // a cron's runs are free with overlap 'allow' / 'cancel-other' alone (awaitTask is an interval's)
    if (spec.cron) delete spec.awaitTask;
    await engine.schedule(spec);
    await engine.reschedule('k', { delay: '5m' });
    const listed = (await engine.next('k', { count: 3 })).map((time) => Date.parse(time.at));
    await clock.advance('8h');
    const fired = runs.map((run) => run.due);
    // the rescheduled run is the caller's (before startAt); every slot after it is not before startAt
    expect(fired[0]).toBe(START + 5 * MINUTE);
    expect(fired.slice(1, 4).map((due) => Math.floor((due - START) / HOUR))).toEqual([5, 6, 7]);
    expect(listed).toEqual(fired.slice(0, 3));
    // the hours between the run and startAt hold no slot of the timer: nothing skipped
    expect(eventsOf('skipped')).toEqual([]);
  });
});

describe('trigger and backfill before startAt', () => {
  it('a trigger runs now and leaves the first slot at startAt', async () => {
    const { engine, clock, runs } = harness();
    const timer = await engine.schedule({ key: 't', handler: 'work', every: '1h', startAt });
    expect(timer.dueAt).toBe(startAt);
    await clock.advance('10m');
    await engine.trigger('t');
    await clock.advance('5h');
    expect(runs.map((run) => run.due)).toEqual([START + 10 * MINUTE, startAt]);
  });

  it('a backfill runs no slot before startAt: a range before it is refused, one across it is cut', async () => {
    const { engine, clock, runs } = harness();
    await engine.schedule({ key: 'b', handler: 'work', every: '1h', startAt });
    await clock.advance('1h');
    await expect(engine.backfill('b', { from: START - 3 * HOUR, to: START })).rejects.toMatchObject({
      reason: 'invalid',
      field: 'range',
      fix: expect.stringMatching(/startAt/),
    });
    await clock.advance('10h');
    expect(runs).toHaveLength(7); // 5h … 11h
    runs.length = 0;
    // slots 4h … 7h: 4h is before startAt, the other three run
    expect(await engine.backfill('b', { from: startAt - HOUR, to: startAt + 2 * HOUR })).toMatchObject({
      slots: 3,
    });
    await clock.advance('1m');
    expect(runs.map((run) => (run.due - START) / HOUR)).toEqual([5, 6, 7]);
  });
});
