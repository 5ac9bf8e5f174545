/*
 * Engine-only cases (virtual-clock precision, in-process handlers, dispose); the docs/spec.md §3 semantics
 * shared with Redis are in test/conformance.
 */
import { harness, START } from '../../../../test/engine/harness';
import type { Clock } from '../clock';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

describe('intervals', () => {
  it('makes nothing up after a long stall: one late run, then back on the grid', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    await engine.schedule({
      key: 'hourly',
      handler: 'work',
      every: '1h',
      payload: { sleepMs: 5 * HOUR + 10 * MINUTE },
    });
    await clock.advance('7h');
    expect(runs.map((run) => (run.due - START) / HOUR)).toEqual([1, 7]);
    // The run went on from 1h to 6h10: the slots at 2h … 6h came during it.
    expect(eventsOf('skipped')).toEqual([
      expect.objectContaining({ reason: 'overlap', due: START + 2 * HOUR, count: 5, version: 1 }),
    ]);
  });

  it('counts the slots that passed before a late start as missed (held and awaitTask: false)', async () => {
    for (const awaitTask of [true, false]) {
      const { engine, clock, runs, eventsOf } = harness({ source: stalled(150 * MINUTE) });
      await engine.schedule({ key: 'hourly', handler: 'work', every: '1h', awaitTask });
      await clock.advance('4h');
      // due at 1h, woken at 3h30: the slots at 2h and 3h passed before it started; 4h is the next.
      expect(runs[0]).toMatchObject({ due: START + HOUR, at: START + 3.5 * HOUR });
      expect(eventsOf('skipped')).toEqual([
        expect.objectContaining({ reason: 'missed', due: START + 2 * HOUR, count: 2, version: 1 }),
      ]);
      expect((await engine.get('hourly'))?.dueAt).toBe(START + 4 * HOUR);
    }
  });
});

/** A cron every five minutes whose runs take `sleepMs`. */
function fiveMinuteCron(sleepMs: number) {
  return { key: 'c', handler: 'work', cron: '*/5 * * * *', tz: 'UTC', payload: { sleepMs } };
}

/** A time source whose wakes come `lagMs` late, as in a stalled or suspended process. */
function stalled(lagMs: number): (clock: Clock) => Clock {
  return (clock) => ({
    now: () => clock.now(),
    setTimeout: (fn, ms) => clock.setTimeout(fn, ms + lagMs),
    clearTimeout: (handle) => clock.clearTimeout(handle),
  });
}

describe('cron', () => {
  it('counts every slot a long run covered, and picks up at the next one', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    await engine.schedule(fiveMinuteCron(21 * MINUTE));
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

  it('a late start that then overlaps reports both: missed before the start, overlap during the run', async () => {
    const { engine, clock, eventsOf } = harness({ source: stalled(12 * MINUTE) });
    await engine.schedule(fiveMinuteCron(11 * MINUTE));
    await clock.advance('30m');
    // due 5m, started 17m (10m, 15m missed), ended 28m (20m, 25m overlapped)
    expect(eventsOf('skipped')).toEqual([
      expect.objectContaining({ reason: 'missed', due: START + 10 * MINUTE, count: 2 }),
      expect.objectContaining({ reason: 'overlap', due: START + 20 * MINUTE, count: 2 }),
    ]);
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
