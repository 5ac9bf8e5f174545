/*
 * Engine-only cases (virtual-clock precision, in-process handlers, dispose); the docs/spec.md §3 semantics
 * shared with Redis are in test/conformance.
 */
import type { TimerEvent } from '../types';
import { VirtualClock } from '../virtual-clock';
import { createEngine } from './engine';
import { harness, START } from '../../../../test/engine/harness';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;

describe('trigger', () => {
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

describe('events', () => {
  it('a running listener that cancels the timer stops its handler from starting', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    engine.on('running', (event) => void engine.cancel(event.key));
    await engine.schedule({ key: 'k', handler: 'work', delay: 10 });
    await clock.advance(10);
    expect(runs).toEqual([]);
    expect(eventsOf('completed')).toEqual([]);
    expect(eventsOf('stale')).toEqual([expect.objectContaining({ key: 'k', reason: 'gone' })]);
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
});

describe('createEngine', () => {
  it('refuses options it cannot use', () => {
    expect(() => harness({ tombstoneMs: -1 })).toThrow(expect.objectContaining({ field: 'tombstoneMs' }));
  });

  // docs/spec.md §5.1a: a whole number of ms, 1 or more, as RedisTimers takes it (Redis's PX takes no other).
  it.each([0, -1, 1.5, Number.NaN])(
    'refuses a requestWindowMs of %p with the refusal shape',
    (requestWindowMs) => {
      expect(() => harness({ requestWindowMs })).toThrow(
        expect.objectContaining({
          reason: 'invalid',
          field: 'requestWindowMs',
          message: expect.stringContaining('is not an integer of 1 or more'),
          fix: expect.stringContaining('86400000 (24 h)'),
        }),
      );
      expect(() => harness({ requestWindowMs: 1 })).not.toThrow();
    },
  );

  // docs/spec.md §5.1a: `limits` as SundialModule checks them (each an integer of 1 or more).
  it.each([
    [{ minEveryMs: 0 }, 'limits.minEveryMs'],
    [{ minEveryMs: -1 }, 'limits.minEveryMs'],
    [{ maxPayloadBytes: 'x' }, 'limits.maxPayloadBytes'],
    [{ maxPayload: 10 }, 'limits.maxPayload'],
    [5, 'limits'],
  ])('refuses limits %j with the refusal shape, naming the field', (limits, field) => {
    expect(() => harness({ limits: limits as never })).toThrow(
      expect.objectContaining({
        reason: 'invalid',
        field,
        fix: expect.stringMatching(/integer (≥ 1|of 1 or more)/),
      }),
    );
  });
});
