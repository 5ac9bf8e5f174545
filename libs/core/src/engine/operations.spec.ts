import { SundialError } from '../errors';
import type { TimerEvent } from '../types';
import { VirtualClock } from '../virtual-clock';
import { createEngine } from './engine';
import { harness, START } from './spec-support';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

describe('cancel', () => {
  it('bumps the version, removes the row, emits cancelled and never runs it', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    const { id } = await engine.schedule({ key: 'k', handler: 'work', delay: '1m' });
    expect(await engine.cancel('k')).toBe(true);
    expect(eventsOf('cancelled')).toEqual([
      { type: 'cancelled', id, key: 'k', version: 2, kind: 'once', at: START, reason: 'cancelled' },
    ]);
    expect(await engine.get('k')).toBeNull();
    expect(await engine.check(id)).toBe(false);
    expect(clock.pendingCount()).toBe(0);
    await clock.advance('1h');
    expect(runs).toEqual([]);
  });

  it('returns false for a key with no live timer, and refuses a malformed key', async () => {
    const { engine } = harness();
    expect(await engine.cancel('nothing')).toBe(false);
    await expect(engine.cancel('no spaces')).rejects.toMatchObject({ reason: 'invalid', field: 'key' });
  });

  it('aborts the signal of a running handler, and its completion changes nothing', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    await engine.schedule({ key: 'k', handler: 'work', every: '1m', payload: { sleepMs: 30 * SECOND } });
    await clock.advance('1m');
    expect(runs[0].signal.aborted).toBe(false);
    await engine.cancel('k');
    expect(runs[0].signal.aborted).toBe(true);
    await clock.advance('1h');
    expect(runs).toHaveLength(1);
    expect(eventsOf('completed')).toEqual([]);
    expect(eventsOf('stale')).toEqual([expect.objectContaining({ key: 'k', version: 1, reason: 'gone' })]);
  });
});

describe('cancelAll', () => {
  it('cancels every key in a scope and returns the count', async () => {
    const { engine, eventsOf } = harness();
    for (const key of ['invoice:1:a', 'invoice:1:b', 'invoice:2:a', 'user:1']) {
      await engine.schedule({ key, handler: 'work', delay: '1h' });
    }
    expect(await engine.cancelAll('invoice:1:')).toBe(2);
    expect((await engine.list()).items.map((t) => t.key)).toEqual(['invoice:2:a', 'user:1']);
    expect(eventsOf('cancelled').map((e) => [e.key, e.reason])).toEqual([
      ['invoice:1:a', 'cancelled'],
      ['invoice:1:b', 'cancelled'],
    ]);
    expect(eventsOf('reset')).toEqual([]);
  });

  it('without a scope cancels everything (reason reset) and emits one reset', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    await engine.schedule({ key: 'a', handler: 'work', delay: '1h' });
    await engine.schedule({ key: 'b', handler: 'work', every: '1h' });
    expect(await engine.cancelAll()).toBe(2);
    expect(eventsOf('cancelled').map((e) => e.reason)).toEqual(['reset', 'reset']);
    expect(eventsOf('reset')).toEqual([
      { type: 'reset', id: '', key: '', version: 0, kind: null, at: START, count: 2 },
    ]);
    await clock.advance('1d');
    expect(runs).toEqual([]);
    // a reset leaves tombstones too: a cancelled name stays cancelled
    expect(await engine.schedule({ key: 'a', handler: 'work', delay: '1h', ifExists: 'keep' })).toMatchObject(
      {
        status: 'cancelled',
      },
    );
  });

  it('refuses a malformed scope', async () => {
    const { engine } = harness();
    await expect(engine.cancelAll('bad scope')).rejects.toMatchObject({ reason: 'invalid', field: 'prefix' });
  });
});

describe('reschedule', () => {
  it('keeps the id, bumps the version, moves the due time and emits scheduled', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    const { id } = await engine.schedule({ key: 'k', handler: 'work', delay: '1h' });
    await clock.advance('10m');
    const moved = await engine.reschedule('k', { delay: '2h' });
    expect(moved).toMatchObject({ id, version: 2, status: 'pending', scheduledAt: START + 10 * MINUTE });
    expect(moved.dueAt).toBe(START + 130 * MINUTE);
    expect(eventsOf('scheduled').at(-1)).toMatchObject({ id, version: 2, due: START + 130 * MINUTE });
    await clock.advance('3h');
    expect(runs.map((run) => [run.id, run.version, run.due])).toEqual([[id, 2, START + 130 * MINUTE]]);
  });

  it('accepts an absolute time; an interval then goes on on its grid from the reschedule', async () => {
    const { engine, clock, runs } = harness();
    await engine.schedule({ key: 'i', handler: 'work', every: '1h' });
    await clock.advance('10m');
    await engine.reschedule('i', { at: START + 90 * MINUTE });
    await clock.advance('4h');
    expect(runs.map((run) => (run.due - START) / MINUTE)).toEqual([90, 130, 190, 250]);
  });

  it('is refused with inactive while the timer runs, and with not-found for no timer', async () => {
    const { engine, clock } = harness();
    await engine.schedule({ key: 'k', handler: 'work', delay: 10, payload: { sleepMs: 1_000 } });
    await clock.advance(10);
    await expect(engine.reschedule('k', { delay: '1h' })).rejects.toMatchObject({
      reason: 'inactive',
      field: 'key',
    });
    expect(await engine.get('k')).toMatchObject({ version: 1, status: 'running' });
    await expect(engine.reschedule('other', { delay: 1 })).rejects.toMatchObject({ reason: 'not-found' });
    await expect(engine.reschedule('k', { delay: -1 } as never)).rejects.toMatchObject({ reason: 'invalid' });
  });

  it('aborts the runs of an awaitTask: false interval, which still record their outcome', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    await engine.schedule({
      key: 'f',
      handler: 'work',
      every: '1m',
      awaitTask: false,
      payload: { sleepMs: 90 * SECOND },
    });
    await clock.advance('1m');
    const moved = await engine.reschedule('f', { delay: '10m' });
    expect(runs[0].signal.aborted).toBe(true);
    await clock.advance('2m');
    expect(eventsOf('completed')).toEqual([expect.objectContaining({ version: 1 })]);
    expect(await engine.get('f')).toMatchObject({ version: moved.version, dueAt: START + 11 * MINUTE });
    expect(eventsOf('scheduled').at(-1)).toMatchObject({ reason: 'reschedule', due: START + 11 * MINUTE });
  });
});

describe('pause and resume', () => {
  it('a paused timer does not fire; resume takes an interval to the next grid slot after now', async () => {
    const { engine, clock, runs } = harness();
    await engine.schedule({ key: 'i', handler: 'work', every: '1h' });
    expect(await engine.pause('i')).toMatchObject({ status: 'paused', version: 2 });
    await clock.advance('150m');
    expect(runs).toEqual([]);
    expect(await engine.resume('i')).toMatchObject({
      status: 'pending',
      version: 3,
      dueAt: START + 3 * HOUR,
    });
    await clock.advance('1h');
    expect(runs.map((run) => run.due)).toEqual([START + 3 * HOUR]);
  });

  it('resume runs a one-shot whose time passed while paused at once, and keeps a future one at its time', async () => {
    const { engine, clock, runs } = harness();
    await engine.schedule({ key: 'soon', handler: 'work', delay: '1m' });
    await engine.schedule({ key: 'later', handler: 'work', delay: '1h' });
    await engine.pause('soon');
    await engine.pause('later');
    await clock.advance('5m');
    await engine.resume('soon');
    await engine.resume('later');
    await clock.advance(0);
    expect(runs.map((run) => [run.key, run.at])).toEqual([['soon', START + 5 * MINUTE]]);
    await clock.advance('1h');
    expect(runs.map((run) => [run.key, run.at])).toEqual([
      ['soon', START + 5 * MINUTE],
      ['later', START + HOUR],
    ]);
  });

  it('resume takes a cron to its next occurrence after now', async () => {
    const { engine, clock, runs } = harness();
    await engine.schedule({ key: 'c', handler: 'work', cron: '0 * * * *', tz: 'UTC' });
    await engine.pause('c');
    await clock.advance('150m');
    expect(await engine.resume('c')).toMatchObject({ dueAt: START + 3 * HOUR });
    await clock.advance('1h');
    expect(runs).toHaveLength(1);
  });

  it('pause and resume are idempotent', async () => {
    const { engine } = harness();
    await engine.schedule({ key: 'i', handler: 'work', every: '1h' });
    await engine.pause('i');
    expect(await engine.pause('i')).toMatchObject({ status: 'paused', version: 2 });
    await engine.resume('i');
    expect(await engine.resume('i')).toMatchObject({ status: 'pending', version: 3 });
  });

  it('is refused with inactive while a run holds the timer', async () => {
    const { engine, clock } = harness();
    await engine.schedule({ key: 'i', handler: 'work', every: '1m', payload: { sleepMs: 30 * SECOND } });
    await clock.advance('1m');
    await expect(engine.pause('i')).rejects.toMatchObject({ reason: 'inactive' });
    expect(await engine.get('i')).toMatchObject({ status: 'running', version: 1 });
  });

  it('pausing an awaitTask: false interval aborts its runs in flight; they still record their outcome', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    await engine.schedule({
      key: 'f',
      handler: 'work',
      every: '1m',
      awaitTask: false,
      payload: { sleepMs: 30 * SECOND },
    });
    await clock.advance('1m');
    expect(await engine.pause('f')).toMatchObject({ status: 'paused', version: 3 });
    expect(runs[0].signal.aborted).toBe(true);
    await clock.advance('10m');
    expect(runs).toHaveLength(1);
    expect(eventsOf('completed')).toHaveLength(1);
    expect(await engine.get('f')).toMatchObject({ status: 'paused', last: { status: 'ok' } });
  });

  it('resume emits scheduled with reason resume', async () => {
    const { engine, eventsOf } = harness();
    await engine.schedule({ key: 'i', handler: 'work', every: '1h' });
    await engine.pause('i');
    await engine.resume('i');
    expect(eventsOf('scheduled').map((e) => [e.reason, e.version, e.due])).toEqual([
      [undefined, 1, START + HOUR],
      ['resume', 3, START + HOUR],
    ]);
  });

  it('a finished row is not live: pause, resume, trigger and reschedule answer not-found', async () => {
    const { engine, clock } = harness();
    await engine.schedule({ key: 'done', handler: 'work', delay: 1, removeOnComplete: false });
    await clock.advance(1);
    await expect(engine.pause('done')).rejects.toMatchObject({ reason: 'not-found' });
    await expect(engine.resume('done')).rejects.toMatchObject({ reason: 'not-found' });
    await expect(engine.trigger('done')).rejects.toMatchObject({ reason: 'not-found' });
    await expect(engine.reschedule('done', { delay: 1 })).rejects.toMatchObject({ reason: 'not-found' });
    await expect(engine.pause('nope')).rejects.toMatchObject({ reason: 'not-found' });
  });

  it('cancel and cancelAll drop a finished row silently, without counting it', async () => {
    const { engine, clock, eventsOf } = harness();
    await engine.schedule({ key: 'a', handler: 'work', delay: 1, removeOnComplete: false });
    await engine.schedule({ key: 'b', handler: 'work', delay: 1, removeOnComplete: false });
    await engine.schedule({ key: 'c', handler: 'work', delay: '1h' });
    await clock.advance(1);
    expect(await engine.cancel('a')).toBe(false);
    expect(await engine.get('a')).toBeNull();
    expect(await engine.cancelAll()).toBe(1);
    expect(await engine.get('b')).toBeNull();
    expect(eventsOf('cancelled').map((e) => e.key)).toEqual(['c']);
  });
});

describe('trigger', () => {
  it('runs a timer now, out of band, without moving its schedule', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    await engine.schedule({ key: 'i', handler: 'work', every: '1h' });
    await clock.advance('10m');
    const running = await engine.trigger('i');
    expect(running).toMatchObject({ status: 'running', runCount: 1, dueAt: START + HOUR, version: 2 });
    expect(eventsOf('scheduled').at(-1)).toMatchObject({
      reason: 'trigger',
      version: 2,
      due: START + 10 * MINUTE,
    });
    await clock.advance('55m');
    expect(runs.map((run) => [run.version, run.due - START])).toEqual([
      [2, 10 * MINUTE],
      [3, HOUR],
    ]);
  });

  it('runs a one-shot early and still runs it at its time', async () => {
    const { engine, clock, runs } = harness();
    await engine.schedule({ key: 'o', handler: 'work', delay: '1h' });
    await engine.trigger('o');
    await clock.advance(0);
    expect(await engine.get('o')).toMatchObject({ status: 'pending', runCount: 1 });
    await clock.advance('1h');
    expect(runs.map((run) => run.due - START)).toEqual([0, HOUR]);
    expect(await engine.get('o')).toBeNull();
  });

  it('a one-shot due while its triggered run holds it runs right after that run', async () => {
    const { engine, clock, runs } = harness();
    await engine.schedule({ key: 'o', handler: 'work', delay: '1m', payload: { sleepMs: 5 * MINUTE } });
    await engine.trigger('o');
    await clock.advance('10m');
    expect(runs.map((run) => [run.due - START, run.at - START])).toEqual([
      [0, 0],
      [MINUTE, 5 * MINUTE],
    ]);
  });

  it('a triggered run that throws does not end an awaitTask interval', async () => {
    const { engine, clock } = harness({
      handlers: {
        flaky: (_payload, ctx) => {
          if (ctx.runCount === 1) throw new Error('first');
        },
      },
    });
    await engine.schedule({ key: 'i', handler: 'flaky', every: '1h' });
    await engine.trigger('i');
    await clock.advance('2h');
    expect(await engine.get('i')).toMatchObject({ status: 'pending', runCount: 3, last: { status: 'ok' } });
  });

  it('a due time that passes during a triggered run is run right after it, late, for every kind', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    await engine.schedule({ key: 'i', handler: 'work', every: '1m', payload: { sleepMs: 90 * SECOND } });
    await engine.schedule({
      key: 'c',
      handler: 'work',
      cron: '* * * * *',
      tz: 'UTC',
      payload: { sleepMs: 90 * SECOND },
    });
    await engine.trigger('i');
    await engine.trigger('c');
    await clock.advance('2m');
    expect(runs.map((run) => [run.key, (run.due - START) / SECOND, (run.at - START) / SECOND])).toEqual([
      ['i', 0, 0],
      ['c', 0, 0],
      ['i', 60, 90],
      ['c', 60, 90],
    ]);
    expect(eventsOf('skipped')).toEqual([]);
  });

  it('is refused while paused', async () => {
    const { engine } = harness();
    await engine.schedule({ key: 'i', handler: 'work', every: '1h' });
    await engine.pause('i');
    await expect(engine.trigger('i')).rejects.toMatchObject({ reason: 'inactive' });
  });

  it('is refused while the timer runs', async () => {
    const { engine, clock } = harness();
    await engine.schedule({ key: 'i', handler: 'work', every: '1m', payload: { sleepMs: 10 * SECOND } });
    await clock.advance('1m');
    await expect(engine.trigger('i')).rejects.toMatchObject({ reason: 'inactive' });
  });

  it('counts toward maxRuns', async () => {
    const { engine, clock, runs } = harness();
    await engine.schedule({ key: 'i', handler: 'work', every: '1h', maxRuns: 1 });
    await engine.trigger('i');
    await clock.advance('3h');
    expect(runs).toHaveLength(1);
    expect(await engine.get('i')).toBeNull();
  });
});

describe('handlers at run time', () => {
  it('a handler removed after scheduling fails the run with reason unknown-handler', async () => {
    const clock = new VirtualClock(START);
    const handlers: Record<string, () => void> = { gone: () => undefined };
    const engine = createEngine({ clock, handlers });
    const failed: TimerEvent[] = [];
    engine.on('failed', (event) => failed.push(event));
    await engine.schedule({ key: 'k', handler: 'gone', delay: 10, removeOnComplete: false });
    delete handlers.gone;
    await clock.advance(10);
    expect(failed).toEqual([
      expect.objectContaining({
        error: { message: expect.stringContaining('"gone"'), reason: 'unknown-handler' },
      }),
    ]);
    expect(await engine.get('k')).toMatchObject({
      status: 'failed',
      last: { error: { reason: 'unknown-handler' } },
    });
  });

  it('a handler added to the handlers object later is found', async () => {
    const clock = new VirtualClock(START);
    const handlers: Record<string, () => void> = {};
    const engine = createEngine({ clock, handlers });
    const ran: string[] = [];
    handlers.late = () => void ran.push('late');
    await engine.schedule({ key: 'k', handler: 'late', delay: 10 });
    await clock.advance(10);
    expect(ran).toEqual(['late']);
  });

  it('a synchronous throw or a non-Error rejection lands on last', async () => {
    const { engine, clock } = harness({
      handlers: {
        sync: () => {
          throw new Error('sync');
        },
        odd: () => Promise.reject('plain string'),
      },
    });
    await engine.schedule({ key: 'a', handler: 'sync', delay: 1, removeOnComplete: false });
    await engine.schedule({ key: 'b', handler: 'odd', delay: 1, removeOnComplete: false });
    await clock.advance(1);
    expect((await engine.get('a'))?.last?.error).toEqual({ message: 'sync' });
    expect((await engine.get('b'))?.last?.error).toEqual({ message: 'plain string' });
  });
});

describe('get, list, check, snapshot', () => {
  it('lists live timers in key order, filtered by prefix and status, a page at a time', async () => {
    const { engine } = harness();
    for (const key of ['b:2', 'a:1', 'b:1', 'b:3', 'c:1'])
      await engine.schedule({ key, handler: 'work', delay: '1h' });
    await engine.pause('b:3');
    const first = await engine.list({ prefix: 'b:', limit: 2 });
    expect(first.items.map((t) => t.key)).toEqual(['b:1', 'b:2']);
    const second = await engine.list({ prefix: 'b:', limit: 2, cursor: first.nextCursor! });
    expect(second).toEqual({
      items: [expect.objectContaining({ key: 'b:3', status: 'paused' })],
      nextCursor: null,
    });
    expect((await engine.list({ status: 'paused' })).items.map((t) => t.key)).toEqual(['b:3']);
    expect((await engine.list()).items).toHaveLength(5);
  });

  it('refuses bad list options', async () => {
    const { engine } = harness();
    await expect(engine.list({ limit: 0 })).rejects.toMatchObject({ field: 'limit' });
    await expect(engine.list({ status: 'gone' as never })).rejects.toMatchObject({ field: 'status' });
    await expect(engine.list({ prefix: 'a b' })).rejects.toMatchObject({ field: 'prefix' });
    await expect(engine.list({ cursor: 5 as never })).rejects.toMatchObject({ field: 'cursor' });
  });

  it('check and snapshot follow which ids are live', async () => {
    const { engine, clock } = harness();
    const a = await engine.schedule({ key: 'a', handler: 'work', delay: 10 });
    const b = await engine.schedule({ key: 'b', handler: 'work', delay: '1h' });
    const c = await engine.schedule({ key: 'c', handler: 'work', delay: '1h' });
    expect(await engine.snapshot()).toEqual([a.id, b.id, c.id]);
    await clock.advance(10);
    await engine.cancel('b');
    expect(await engine.snapshot()).toEqual([c.id]);
    expect([await engine.check(a.id), await engine.check(b.id), await engine.check(c.id)]).toEqual([
      false,
      false,
      true,
    ]);
    expect(await engine.check('999')).toBe(false);
    await expect(engine.check(3 as never)).rejects.toMatchObject({ field: 'id' });
    await expect(engine.get('bad key')).rejects.toMatchObject({ field: 'key' });
  });
});

describe('events', () => {
  it('a listener that throws or rejects never breaks the engine, and is logged', async () => {
    const { engine, clock, runs, errors } = harness();
    engine.on('running', () => {
      throw new Error('listener bug');
    });
    engine.on('completed', async () => {
      throw new Error('async listener bug');
    });
    await engine.schedule({ key: 'i', handler: 'work', every: '1m' });
    await clock.advance('3m');
    expect(runs).toHaveLength(3);
    expect(errors.filter((line) => line.includes('listener bug'))).toHaveLength(6);
  });

  it('a running listener that cancels the timer stops its handler from starting', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    engine.on('running', (event) => void engine.cancel(event.key));
    await engine.schedule({ key: 'k', handler: 'work', delay: 10 });
    await clock.advance(10);
    expect(runs).toEqual([]);
    expect(eventsOf('completed')).toEqual([]);
    expect(eventsOf('stale')).toEqual([expect.objectContaining({ key: 'k', reason: 'gone' })]);
  });

  it('on() returns an unsubscribe function', async () => {
    const { engine } = harness();
    const seen: string[] = [];
    const off = engine.on('scheduled', (event) => seen.push(event.key));
    await engine.schedule({ key: 'a', handler: 'work', delay: 1 });
    off();
    await engine.schedule({ key: 'b', handler: 'work', delay: 1 });
    expect(seen).toEqual(['a']);
  });

  it('refuses an unknown event name or a listener that is not a function', () => {
    const { engine } = harness();
    expect(() => engine.on('fired' as never, () => undefined)).toThrow(SundialError);
    expect(() => engine.on('failed', 'nope' as never)).toThrow(
      expect.objectContaining({ field: 'listener' }),
    );
  });

  it('carries type, id, key, version, kind and at on every timer event', async () => {
    const { engine, clock, events } = harness();
    await engine.schedule({ key: 'x', handler: 'work', delay: 5, payload: { fail: 'f' } });
    await clock.advance(5);
    expect(events.map((e) => [e.type, e.id, e.key, e.version, e.kind, e.at - START])).toEqual([
      ['scheduled', '1', 'x', 1, 'once', 0],
      ['running', '1', 'x', 1, 'once', 5],
      ['failed', '1', 'x', 1, 'once', 5],
    ]);
  });
});

describe('dispose', () => {
  it('cancels everything it owns, aborts running handlers, emits disposed, clears listeners', async () => {
    const { engine, clock, runs, events, eventsOf } = harness();
    await engine.schedule({ key: 'a', handler: 'work', delay: '1h' });
    await engine.schedule({ key: 'b', handler: 'work', every: '1m', payload: { sleepMs: 30 * SECOND } });
    await clock.advance('1m');
    await engine.dispose();
    expect(runs[0].signal.aborted).toBe(true);
    expect(eventsOf('cancelled').map((e) => [e.key, e.reason])).toEqual([
      ['a', 'disposed'],
      ['b', 'disposed'],
    ]);
    expect(eventsOf('disposed')).toEqual([
      { type: 'disposed', id: '', key: '', version: 0, kind: null, at: START + MINUTE, count: 2 },
    ]);
    const seen = events.length;
    await clock.advance('1d');
    expect(runs).toHaveLength(1);
    expect(events).toHaveLength(seen);
    expect(clock.pendingCount()).toBe(0);
  });

  it('later calls fail with disposed; dispose itself is idempotent', async () => {
    const { engine } = harness();
    await engine.dispose();
    await engine.dispose();
    const calls = [
      () => engine.schedule({ key: 'a', handler: 'work', delay: 1 }),
      () => engine.scheduleMany([]),
      () => engine.cancel('a'),
      () => engine.cancelAll(),
      () => engine.reschedule('a', { delay: 1 }),
      () => engine.pause('a'),
      () => engine.resume('a'),
      () => engine.trigger('a'),
      () => engine.get('a'),
      () => engine.list(),
      () => engine.check('1'),
      () => engine.snapshot(),
    ];
    for (const call of calls) await expect(call()).rejects.toMatchObject({ reason: 'disposed' });
    expect(() => engine.on('failed', () => undefined)).toThrow(
      expect.objectContaining({ reason: 'disposed' }),
    );
  });
});

describe('createEngine', () => {
  it('refuses options it cannot use', () => {
    expect(() => harness({ tombstoneMs: -1 })).toThrow(expect.objectContaining({ field: 'tombstoneMs' }));
  });
});
