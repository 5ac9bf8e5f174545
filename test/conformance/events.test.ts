/**
 * docs/spec.md §3.4 and §3.6 on every backend: events, unsubscribing, dispose.
 */
import { BACKENDS, useBackend } from './backends';

describe.each(BACKENDS)('%s backend: events', (name) => {
  const backend = useBackend(name);

  it('carries type, id, key, version, kind and at on every timer event, in order', async () => {
    const h = await backend.open();
    const timer = await h.timers.schedule({ key: 'x', handler: 'work', delay: 50, payload: { fail: 'f' } });
    await h.event({ type: 'failed', key: 'x' });
    expect(h.events.map((e) => [e.type, e.id, e.key, e.version, e.kind])).toEqual([
      ['scheduled', timer.id, 'x', 1, 'once'],
      ['running', timer.id, 'x', 1, 'once'],
      ['failed', timer.id, 'x', 1, 'once'],
    ]);
    expect(h.events[0].at).toBe(timer.scheduledAt);
    expect(h.events[1].at).toBeGreaterThanOrEqual(timer.dueAt);
    expect(h.events[2].at).toBeGreaterThanOrEqual(h.events[1].at);
  });

  it('a listener that throws or rejects never breaks the timers', async () => {
    const h = await backend.open();
    h.timers.on('running', () => {
      throw new Error('listener bug');
    });
    h.timers.on('completed', async () => {
      throw new Error('async listener bug');
    });
    await h.timers.schedule({ key: 'i', handler: 'work', every: 100, maxRuns: 3 });
    await h.event({ type: 'completed', key: 'i', version: 3 });
    expect(h.runs).toHaveLength(3);
  });

  it('on() returns an unsubscribe function', async () => {
    const h = await backend.open();
    const seen: string[] = [];
    const off = h.timers.on('scheduled', (event) => seen.push(event.key));
    await h.timers.schedule({ key: 'a', handler: 'work', delay: '1h' });
    await h.event({ type: 'scheduled', key: 'a' });
    off();
    await h.timers.schedule({ key: 'b', handler: 'work', delay: '1h' });
    await h.event({ type: 'scheduled', key: 'b' });
    expect(seen).toEqual(['a']);
  });

  it('refuses an unknown event name or a listener that is not a function', async () => {
    const h = await backend.open();
    expect(() => h.timers.on('fired' as never, () => undefined)).toThrow(
      expect.objectContaining({ field: 'event' }),
    );
    expect(() => h.timers.on('failed', 'nope' as never)).toThrow(
      expect.objectContaining({ field: 'listener' }),
    );
  });

  it('after dispose every call is refused with disposed, and dispose itself is idempotent', async () => {
    const h = await backend.open();
    await h.timers.dispose();
    await h.timers.dispose();
    expect(h.eventsOf('disposed')).toHaveLength(1);
    const calls = [
      () => h.timers.schedule({ key: 'a', handler: 'work', delay: 1 }),
      () => h.timers.scheduleMany([]),
      () => h.timers.cancel('a'),
      () => h.timers.cancelAll(),
      () => h.timers.reschedule('a', { delay: 1 }),
      () => h.timers.pause('a'),
      () => h.timers.resume('a'),
      () => h.timers.trigger('a'),
      () => h.timers.get('a'),
      () => h.timers.list(),
      () => h.timers.check('1'),
      () => h.timers.snapshot(),
    ];
    for (const call of calls) await expect(call()).rejects.toMatchObject({ reason: 'disposed' });
    expect(() => h.timers.on('failed', () => undefined)).toThrow(
      expect.objectContaining({ reason: 'disposed' }),
    );
  });
});
