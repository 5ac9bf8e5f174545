import type { TimerContext } from '../types';
import { harness, START } from '../../../../test/engine/harness';

const MINUTE = 60_000;

/**
 * Defect 6 of issue 8: an operation called from inside a listener (or from a handler's abort
 * listener) sees the state as it is, cancels each timer once and counts truly.
 */
describe('re-entrant calls', () => {
  it('a cancelled listener that calls cancelAll(scope) during cancelAll: each timer cancelled once, counts add up', async () => {
    const { engine, eventsOf } = harness();
    for (const key of ['s:a', 's:b', 's:c', 's:d', 'other'])
      await engine.schedule({ key, handler: 'work', delay: '1h' });
    const inner: Promise<number>[] = [];
    engine.on('cancelled', () => void inner.push(engine.cancelAll('s:')));

    const outer = await engine.cancelAll('s:');
    const nested = await Promise.all(inner);

    expect(eventsOf('cancelled').map((event) => event.key)).toEqual(['s:a', 's:b', 's:c', 's:d']);
    expect(outer + nested.reduce((sum, n) => sum + n, 0)).toBe(4);
    expect((await engine.list()).items.map((timer) => timer.key)).toEqual(['other']);
  });

  it('a cancelled listener that calls cancelAll() during a scoped cancelAll: every timer cancelled once', async () => {
    const { engine, eventsOf } = harness();
    for (const key of ['s:a', 's:b', 'x', 'y']) await engine.schedule({ key, handler: 'work', delay: '1h' });
    const inner: Promise<number>[] = [];
    engine.on('cancelled', (event) => {
      if (event.reason === 'cancelled') inner.push(engine.cancelAll());
    });
    const outer = await engine.cancelAll('s:');
    const nested = await Promise.all(inner);
    const cancelledKeys = eventsOf('cancelled').map((event) => event.key);
    expect([...cancelledKeys].sort()).toEqual(['s:a', 's:b', 'x', 'y']);
    expect(outer + nested.reduce((sum, n) => sum + n, 0)).toBe(4);
    expect(eventsOf('reset').reduce((sum, event) => sum + (event.count ?? 0), 0)).toBe(
      nested.reduce((a, b) => a + b, 0),
    );
  });

  it("a handler's abort listener that calls cancelAll during cancelAll: each timer cancelled once", async () => {
    const { clock, engine, eventsOf } = harness({
      handlers: {
        wait: (_payload: unknown, ctx: TimerContext) =>
          new Promise<void>((resolve) =>
            ctx.signal.addEventListener('abort', () => {
              void engine.cancelAll('s:');
              resolve();
            }),
          ),
      },
    });
    await engine.schedule({ key: 's:a', handler: 'wait', delay: 10 });
    for (const key of ['s:b', 's:c']) await engine.schedule({ key, handler: 'work', delay: '1h' });
    await clock.advance(10);
    const count = await engine.cancelAll('s:');
    expect(eventsOf('cancelled').map((event) => event.key)).toEqual(['s:a', 's:b', 's:c']);
    expect(count).toBe(3);
    expect((await engine.list()).items).toEqual([]);
  });

  it('a scheduled listener that cancels the timer: schedule returns it as scheduled, and it never runs', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    engine.on('scheduled', (event) => void engine.cancel(event.key));
    const timer = await engine.schedule({ key: 'k', handler: 'work', delay: 10 });
    expect(timer).toMatchObject({ key: 'k', version: 1, status: 'pending' });
    expect(await engine.get('k')).toBeNull();
    expect(eventsOf('cancelled')).toEqual([expect.objectContaining({ key: 'k', version: 2 })]);
    await clock.advance('1h');
    expect(runs).toEqual([]);
  });

  it('a scheduled listener that schedules another timer: both live, each once', async () => {
    const { engine, clock, runs } = harness();
    engine.on('scheduled', (event) => {
      if (event.key === 'first') void engine.schedule({ key: 'second', handler: 'work', delay: 20 });
    });
    await engine.schedule({ key: 'first', handler: 'work', delay: 10 });
    await clock.advance('1h');
    expect(runs.map((run) => [run.key, run.due - START])).toEqual([
      ['first', 10],
      ['second', 20],
    ]);
  });

  it('a scheduled listener that cancels during trigger: the handler does not run', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    await engine.schedule({ key: 'k', handler: 'work', every: '1h' });
    engine.on('scheduled', (event) => {
      if (event.reason === 'trigger') void engine.cancel(event.key);
    });
    const triggered = await engine.trigger('k');
    expect(triggered).toMatchObject({ key: 'k', version: 2 });
    await clock.advance('3h');
    expect(runs).toEqual([]);
    expect(eventsOf('running')).toEqual([]);
    expect(await engine.get('k')).toBeNull();
  });

  it('a scheduled listener inside scheduleMany: the batch is placed whole before any listener runs', async () => {
    const { engine, errors } = harness();
    engine.on('scheduled', (event) => {
      if (event.key === 'a') return engine.schedule({ key: 'b', handler: 'work', delay: '2h' });
    });
    const placed = await engine.scheduleMany([
      { key: 'a', handler: 'work', delay: '1h' },
      { key: 'b', handler: 'work', delay: '1h' },
    ]);
    expect(placed.map((timer) => timer.key)).toEqual(['a', 'b']);
    expect(await engine.get('b')).toMatchObject({ id: placed[1].id, dueAt: START + 60 * MINUTE });
    await Promise.resolve();
    expect(errors).toEqual([expect.stringContaining('already exists')]);
  });

  it('a completed listener that reschedules an interval: it runs at the new time, once per due', async () => {
    const { engine, clock, runs } = harness();
    let moved = false;
    engine.on('completed', (event) => {
      if (moved) return;
      moved = true;
      void engine.reschedule(event.key, { delay: '10m' });
    });
    await engine.schedule({ key: 'i', handler: 'work', every: '1h' });
    await clock.advance('2h');
    expect(runs.map((run) => [run.version, (run.due - START) / MINUTE])).toEqual([
      [1, 60],
      [3, 70],
      [4, 120],
    ]);
  });
});
