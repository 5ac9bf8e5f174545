import { harness, START } from './spec-support';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

describe('intervals', () => {
  it('fire on their grid, first one interval after creation, pending between runs with a new version', async () => {
    const { engine, clock, runs } = harness();
    await engine.schedule({ key: 'beat', handler: 'work', every: '30s' });
    await clock.advance('95s');
    expect(runs.map((run) => [run.due, run.at, run.version, run.runCount])).toEqual([
      [START + 30 * SECOND, START + 30 * SECOND, 1, 1],
      [START + 60 * SECOND, START + 60 * SECOND, 2, 2],
      [START + 90 * SECOND, START + 90 * SECOND, 3, 3],
    ]);
    expect(await engine.get('beat')).toMatchObject({
      status: 'pending',
      version: 4,
      dueAt: START + 120 * SECOND,
      runCount: 3,
      last: { started: START + 90 * SECOND, ended: START + 90 * SECOND, status: 'ok' },
    });
  });

  it('awaitTask: true arms the next tick after the run settles, on the grid, so a slow run never overlaps', async () => {
    const { engine, clock, runs } = harness();
    await engine.schedule({ key: 'slow', handler: 'work', every: '10s', payload: { sleepMs: 25 * SECOND } });
    await clock.advance('10s');
    expect(await engine.get('slow')).toMatchObject({ status: 'running' });
    await clock.advance('60s');
    // ran at 10s (ends 35s) → next slot after 35s is 40s (ends 65s) → next is 70s
    expect(runs.map((run) => run.due - START)).toEqual([10, 40, 70].map((s) => s * SECOND));
  });

  it('awaitTask: true ends the interval as failed when a run throws', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    await engine.schedule({
      key: 'strict',
      handler: 'work',
      every: '1m',
      payload: { fail: 'down' },
      removeOnComplete: false,
    });
    await clock.advance('5m');
    expect(runs).toHaveLength(1);
    expect(eventsOf('failed')).toEqual([
      expect.objectContaining({ key: 'strict', error: { message: 'down' } }),
    ]);
    expect(await engine.get('strict')).toMatchObject({ status: 'failed', last: { status: 'failed' } });
  });

  it('a failed awaitTask: true interval is removed by default', async () => {
    const { engine, clock } = harness();
    const { id } = await engine.schedule({
      key: 'strict',
      handler: 'work',
      every: '1m',
      payload: { fail: 'down' },
    });
    await clock.advance('1m');
    expect(await engine.get('strict')).toBeNull();
    expect(await engine.check(id)).toBe(false);
  });

  it('awaitTask:false continues ticking after task failure', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    await engine.schedule({
      key: 'heartbeat',
      handler: 'work',
      every: '1s',
      awaitTask: false,
      payload: { fail: 'no reply' },
    });
    await clock.advance('5s');
    expect(runs.map((run) => run.due - START)).toEqual([1, 2, 3, 4, 5].map((s) => s * SECOND));
    expect(eventsOf('failed')).toHaveLength(5);
    expect(await engine.get('heartbeat')).toMatchObject({
      status: 'pending',
      runCount: 5,
      lastErrorAt: START + 5 * SECOND,
      last: { status: 'failed', error: { message: 'no reply' } },
    });
  });

  it('awaitTask: false arms the next tick at claim time, so runs overlap and the timer stays pending', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    await engine.schedule({
      key: 'ping',
      handler: 'work',
      every: '1s',
      awaitTask: false,
      payload: { sleepMs: 2_500 },
    });
    await clock.advance('1s');
    expect(await engine.get('ping')).toMatchObject({
      status: 'pending',
      last: { started: START + SECOND, status: 'running' },
      version: 2,
      dueAt: START + 2 * SECOND,
    });
    await clock.advance('3s');
    expect(runs.map((run) => run.due - START)).toEqual([1, 2, 3, 4].map((s) => s * SECOND));
    expect(eventsOf('completed').map((event) => event.version)).toEqual([1]);
    await clock.advance('10s');
    // `last` describes the most recent run even when an older one ends after it started
    const timer = await engine.get('ping');
    expect(timer?.last?.started).toBe(START + 14 * SECOND);
  });

  it('maxRuns completes the timer after that many runs', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    await engine.schedule({
      key: 'thrice',
      handler: 'work',
      every: '1m',
      maxRuns: 3,
      removeOnComplete: false,
    });
    await clock.advance('10m');
    expect(runs).toHaveLength(3);
    expect(await engine.get('thrice')).toMatchObject({ status: 'completed', runCount: 3 });
    expect(eventsOf('completed')).toHaveLength(3);
  });

  it('maxRuns with awaitTask: false completes once the last run settles', async () => {
    const { engine, clock, runs } = harness();
    await engine.schedule({
      key: 'twice',
      handler: 'work',
      every: '1s',
      awaitTask: false,
      maxRuns: 2,
      payload: { sleepMs: 1_500 },
    });
    await clock.advance('2s');
    expect(await engine.get('twice')).toMatchObject({ status: 'running', runCount: 2 });
    await clock.advance('2s');
    expect(runs).toHaveLength(2);
    expect(await engine.get('twice')).toBeNull();
  });

  it('makes nothing up after a long stall: one late run, then back on the grid', async () => {
    const { engine, clock, runs } = harness();
    await engine.schedule({
      key: 'hourly',
      handler: 'work',
      every: '1h',
      payload: { sleepMs: 5 * HOUR + 10 * MINUTE },
    });
    await clock.advance('7h');
    expect(runs.map((run) => (run.due - START) / HOUR)).toEqual([1, 7]);
  });
});

describe('cron', () => {
  it('fires on the wall clock of its zone', async () => {
    const { engine, clock, runs } = harness();
    const timer = await engine.schedule({
      key: 'digest',
      handler: 'work',
      cron: '0 7 * * *',
      tz: 'America/Toronto',
    });
    // 2026-03-01 is EST (UTC-5): 07:00 local is 12:00Z
    expect(timer.dueAt).toBe(Date.parse('2026-03-01T12:00:00Z'));
    await clock.advance('3d');
    expect(runs.map((run) => new Date(run.due).toISOString())).toEqual([
      '2026-03-01T12:00:00.000Z',
      '2026-03-02T12:00:00.000Z',
      '2026-03-03T12:00:00.000Z',
    ]);
    expect(await engine.get('digest')).toMatchObject({
      status: 'pending',
      cron: '0 7 * * *',
      tz: 'America/Toronto',
    });
  });

  it('skips a slot that comes while the previous run is still running (reason overlap)', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    await engine.schedule({
      key: 'm',
      handler: 'work',
      cron: '* * * * *',
      tz: 'UTC',
      payload: { sleepMs: 90 * SECOND },
    });
    await clock.advance('4m');
    expect(runs.map((run) => (run.due - START) / MINUTE)).toEqual([1, 3]);
    // reported when the run ends: one event per run, counting the slots it covered
    expect(eventsOf('skipped')).toEqual([
      expect.objectContaining({ key: 'm', reason: 'overlap', due: START + 2 * MINUTE, count: 1 }),
    ]);
    await clock.advance('1m');
    expect(eventsOf('skipped')).toHaveLength(2);
  });

  it('counts every slot a long run covered, and picks up at the next one', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    await engine.schedule({
      key: 'm',
      handler: 'work',
      cron: '*/5 * * * *',
      tz: 'UTC',
      payload: { sleepMs: 21 * MINUTE },
    });
    await clock.advance('30m');
    expect(eventsOf('skipped')).toEqual([
      expect.objectContaining({
        reason: 'overlap',
        due: START + 10 * MINUTE,
        count: 4,
        at: START + 26 * MINUTE,
      }),
    ]);
    expect(runs.map((run) => (run.due - START) / MINUTE)).toEqual([5, 30]);
  });

  it('a throwing run lands failed on last and keeps the schedule', async () => {
    const { engine, clock, runs } = harness();
    await engine.schedule({
      key: 'c',
      handler: 'work',
      cron: '*/10 * * * *',
      tz: 'UTC',
      payload: { fail: 'x' },
    });
    await clock.advance('30m');
    expect(runs).toHaveLength(3);
    expect(await engine.get('c')).toMatchObject({
      status: 'pending',
      dueAt: START + 40 * MINUTE,
      last: { status: 'failed', error: { message: 'x' } },
    });
  });

  it('a trigger run leaves the schedule as it was and skips nothing', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    const timer = await engine.schedule({
      key: 'c',
      handler: 'work',
      cron: '*/5 * * * *',
      tz: 'UTC',
      payload: { sleepMs: 2 * MINUTE },
    });
    await clock.advance('1m');
    await engine.trigger('c');
    await clock.advance('6m');
    expect(eventsOf('skipped')).toEqual([]);
    expect(runs.map((run) => run.due - START)).toEqual([MINUTE, 5 * MINUTE]);
    expect(timer.dueAt).toBe(START + 5 * MINUTE);
  });

  it('a live cron goes on past a gap of more than 4 years (2096-02-29, then 2104-02-29)', async () => {
    const { engine, clock, runs, eventsOf } = harness({ start: Date.parse('2096-01-01T00:00:00Z') });
    await engine.schedule({ key: 'leap', handler: 'work', cron: '0 0 29 2 *', tz: 'America/Toronto' });
    await clock.advance(Date.parse('2105-01-01T00:00:00Z') - clock.now());
    expect(runs.map((run) => new Date(run.due).toISOString())).toEqual([
      '2096-02-29T05:00:00.000Z',
      '2104-02-29T05:00:00.000Z',
    ]);
    expect(eventsOf('completed')).toHaveLength(2);
    expect(await engine.get('leap')).toMatchObject({
      status: 'pending',
      dueAt: Date.parse('2108-02-29T05:00:00Z'),
    });
  });

  it('a live cron with no slot left ends visibly: its event says no-next-slot', async () => {
    const lastLeapDay = Date.UTC(275760, 1, 29);
    const { engine, clock, runs, eventsOf } = harness({ start: lastLeapDay - HOUR });
    await engine.schedule({
      key: 'leap',
      handler: 'work',
      cron: '0 0 29 2 *',
      tz: 'UTC',
      removeOnComplete: false,
    });
    await clock.advance('2h');
    expect(runs.map((run) => run.due)).toEqual([lastLeapDay]);
    expect(eventsOf('completed')).toEqual([expect.objectContaining({ key: 'leap', reason: 'no-next-slot' })]);
    expect(await engine.get('leap')).toMatchObject({ status: 'completed', last: { status: 'ok' } });
  });

  it('a paused cron with no slot left refuses to resume and stays paused', async () => {
    const lastLeapDay = Date.UTC(275760, 1, 29);
    const { engine, clock } = harness({ start: lastLeapDay - HOUR });
    await engine.schedule({ key: 'leap', handler: 'work', cron: '0 0 29 2 *', tz: 'UTC' });
    await engine.pause('leap');
    await clock.advance('2h');
    await expect(engine.resume('leap')).rejects.toMatchObject({
      reason: 'invalid',
      field: 'cron',
      message: expect.stringMatching(/has no slot after/),
    });
    expect(await engine.get('leap')).toMatchObject({ status: 'paused' });
  });

  it('completes after maxRuns', async () => {
    const { engine, clock, runs } = harness();
    await engine.schedule({ key: 'c', handler: 'work', cron: '0 * * * *', tz: 'UTC', maxRuns: 2 });
    await clock.advance('5h');
    expect(runs).toHaveLength(2);
    expect(await engine.get('c')).toBeNull();
  });
});
