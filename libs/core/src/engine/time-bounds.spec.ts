/*
 * docs/spec.md §3.3c/§3.4 on the engine's virtual clock: a periodic timer's time bounds hold across pause
 * and resume — no slot after endAt, whatever was paused meanwhile. Both backends: test/conformance/
 * reschedule-pause.test.ts.
 */
import { harness, START } from '../../../../test/engine/harness';
import type { TimerSpec } from '../types';

const HOUR = 3_600_000;

const SCHEDULES: Array<[string, Partial<TimerSpec>]> = [
  ['interval', { every: '1h' }],
  ['cron', { cron: '0 * * * *', tz: 'UTC' }],
];

describe.each(SCHEDULES)('%s paused across its endAt', (_kind, schedule) => {
  const endAt = START + 3 * HOUR;
  const spec = { key: 'k', handler: 'work', ...schedule, endAt } as TimerSpec;

  it('ends on resume, completed with reason ended, and runs no slot after endAt', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    await engine.schedule({ ...spec, removeOnComplete: false });
    await clock.advance(1.5 * HOUR);
    await engine.pause('k');
    await clock.advance(4 * HOUR);
    const resumed = await engine.resume('k');
    expect(resumed).toMatchObject({ status: 'completed' });
    await clock.advance(5 * HOUR);
    expect(runs.map((run) => run.due)).toEqual([START + HOUR]);
    expect(eventsOf('scheduled').filter((event) => event.reason === 'resume')).toEqual([]);
    expect(eventsOf('completed').at(-1)).toMatchObject({ reason: 'ended' });
    expect(await engine.get('k')).toMatchObject({ status: 'completed' });
    expect(await engine.next('k')).toEqual([]);
    expect((await engine.history('k'))[0]).toMatchObject({ event: 'completed', reason: 'ended' });
  });

  it('a resume before endAt goes on to the next slot as before', async () => {
    const { engine, clock, runs } = harness();
    await engine.schedule(spec);
    await clock.advance(0.5 * HOUR);
    await engine.pause('k');
    await clock.advance(1.75 * HOUR);
    expect(await engine.resume('k')).toMatchObject({ status: 'pending', dueAt: START + 3 * HOUR });
    await clock.advance(5 * HOUR);
    expect(runs.map((run) => run.due)).toEqual([START + 3 * HOUR]);
  });
});

it('a cron paused by its failures across its endAt ends failed on resume, and is removed by default', async () => {
  const { engine, clock, runs, eventsOf } = harness();
  await engine.schedule({
    key: 'k',
    handler: 'work',
    cron: '0 * * * *',
    tz: 'UTC',
    endAt: START + 3 * HOUR,
    payload: { fail: 'boom' },
    pauseAfterFailures: 1,
  });
  await clock.advance(1.5 * HOUR);
  expect(await engine.get('k')).toMatchObject({ status: 'paused', last: { status: 'failed' } });
  await clock.advance(4 * HOUR);
  expect(await engine.resume('k')).toMatchObject({ status: 'failed' });
  await clock.advance(5 * HOUR);
  expect(runs).toHaveLength(1);
  expect(eventsOf('failed').at(-1)).toMatchObject({ reason: 'ended' });
  expect(await engine.get('k')).toBeNull();
});

/**
 * A run moved by `reschedule` is the caller's, not a slot (§3.4): to a past `at` it runs at once, whatever
 * the catch-up policy, and the slots before the reschedule — run already, or moved over — are not counted.
 */
describe.each([
  ['interval', { every: '1h' }],
  ['interval, catchupWindow', { every: '1h', catchupWindow: '1h' }],
  ["interval, catchup 'skip'", { every: '1h', catchup: 'skip' }],
  ['cron', { cron: '0 * * * *', tz: 'UTC' }],
  ['cron, catchupWindow', { cron: '0 * * * *', tz: 'UTC', catchupWindow: '1h' }],
  ["cron, catchup 'skip'", { cron: '0 * * * *', tz: 'UTC', catchup: 'skip' }],
  // 'all' ran the slots between the moved due and the reschedule again, each of them a second time
  ["interval, catchup 'all'", { every: '1h', catchup: 'all' }],
  ["cron, catchup 'all'", { cron: '0 * * * *', tz: 'UTC', catchup: 'all', catchupWindow: '1d' }],
  ["interval, overlap 'allow'", { every: '1h', overlap: 'allow' }],
  ["interval, overlap 'allow', jitter", { every: '1h', overlap: 'allow', jitter: '1m' }],
  ["cron, overlap 'allow'", { cron: '0 * * * *', tz: 'UTC', overlap: 'allow' }],
] as Array<[string, Partial<TimerSpec>]>)('%s rescheduled to a past at', (_name, schedule) => {
  it('runs it at once with that due, skips nothing, and goes on at its next slot', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    await engine.schedule({ key: 'k', handler: 'work', ...schedule } as TimerSpec);
    await clock.advance(10 * HOUR + 1_000);
    const before = runs.length;
    const skipped = eventsOf('skipped').length;
    const at = START + 5 * HOUR + 1;
    const moved = await engine.reschedule('k', { at });
    expect((await engine.next('k', { count: 1 })).map((time) => Date.parse(time.at))).toEqual([at]);
    await clock.advance(1_000);
    expect(runs.slice(before).map((run) => run.due)).toEqual([at]);
    expect(eventsOf('skipped').slice(skipped)).toEqual([]);
    // the interval's grid from the reschedule, the cron's next occurrence: an hour on
    const next = (await engine.get('k'))!.dueAt;
    expect(next - (schedule.every ? moved.scheduledAt : START + 10 * HOUR) - HOUR).toBeLessThan(60_000);
  });
});

it('a backfill while a moved run waits goes back to that run at its own due, no jitter, run however late', async () => {
  const { engine, clock, runs } = harness();
  const spec = { key: 'k', handler: 'work', every: '1h', jitter: '10m', catchup: 'skip' } as const;
  await engine.schedule({ ...spec, payload: { sleepMs: HOUR } });
  await clock.advance(3 * HOUR);
  const at = clock.now() + HOUR / 2;
  await engine.reschedule('k', { at });
  const from = START - 3 * HOUR;
  expect(await engine.backfill('k', { from, to: START - 2 * HOUR })).toEqual({ slots: 2 });
  expect((await engine.next('k', { count: 3 })).map((time) => Date.parse(time.at))).toEqual([
    START - 3 * HOUR,
    START - 2 * HOUR,
    at,
  ]);
  const before = runs.length;
  // the two backfill runs take an hour each: the moved run's due has passed when they end
  await clock.advance(3 * HOUR);
  expect(runs.slice(before).map((run) => run.due)).toEqual([START - 3 * HOUR, START - 2 * HOUR, at]);
});

/**
 * overlap 'buffer-one' keeps the first slot that came during a run (§3.3a): a catch-up policy does not pass
 * it as late (it passed 'skip' and 'catchupWindow' timers' kept slot, and counted a slot twice).
 */
describe.each([
  ['no catch-up policy', {}],
  ["catchup 'skip'", { catchup: 'skip' }],
  ['a catchupWindow', { catchupWindow: '1h' }],
] as Array<[string, Partial<TimerSpec>]>)('buffer-one with %s', (_name, policy) => {
  it('runs the kept slot after the run, and counts each other slot once', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    const spec = { key: 'b', handler: 'work', every: '1h', overlap: 'buffer-one', maxRuns: 3 } as const;
    await engine.schedule({ ...spec, ...policy, payload: { sleepMs: 2.5 * HOUR } });
    await clock.advance(12 * HOUR);
    // runs 1h–3h30 (2h kept, 3h skipped), 2h at 3h30–6h (4h kept, 5h and 6h skipped), 4h at 6h
    expect(runs.map((run) => [(run.due - START) / HOUR, (run.at - START) / HOUR])).toEqual([
      [1, 1],
      [2, 3.5],
      [4, 6],
    ]);
    const skipped = eventsOf('skipped').map((event) => [
      event.reason,
      (event.due! - START) / HOUR,
      event.count,
    ]);
    expect(skipped).toEqual([
      ['overlap', 3, 1],
      ['overlap', 5, 2],
    ]);
  });
});

it("next lists the slot buffer-one kept first, as it runs, under catchup 'skip'", async () => {
  const { engine, clock, runs } = harness();
  const spec = { key: 'b', handler: 'work', every: '1h', overlap: 'buffer-one', catchup: 'skip' } as const;
  await engine.schedule({ ...spec, maxRuns: 2, payload: { sleepMs: 2.5 * HOUR } });
  const listed: number[][] = [];
  engine.on('completed', () => {
    void engine.next('b', { count: 1 }).then((next) => listed.push(next.map((time) => Date.parse(time.at))));
  });
  await clock.advance(4 * HOUR);
  // the run of 1h ended at 3h30 with 2h kept (and 3h skipped): listed, then run
  expect(listed[0]).toEqual([START + 2 * HOUR]);
  expect(runs.map((run) => run.due)).toEqual([START + HOUR, START + 2 * HOUR]);
});
