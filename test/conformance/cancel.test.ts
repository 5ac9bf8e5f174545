/**
 * docs/spec.md §3.4 on every backend: cancel and cancelAll.
 */
import { BACKENDS, useBackend } from './backends';

describe.each(BACKENDS)('%s backend: cancel and cancelAll', (name) => {
  const backend = useBackend(name);

  it('cancel bumps the version, removes the row, emits cancelled and never runs it', async () => {
    const h = await backend.open();
    const { id } = await h.timers.schedule({ key: 'k', handler: 'work', delay: 100 });
    expect(await h.timers.cancel('k')).toBe(true);
    expect(await h.event({ type: 'cancelled' })).toMatchObject({
      id,
      key: 'k',
      version: 2,
      kind: 'once',
      reason: 'cancelled',
    });
    expect(await h.timers.get('k')).toBeNull();
    expect(await h.timers.check(id)).toBe(false);
    await h.pass(300);
    expect(h.runs).toEqual([]);
  });

  it('cancel returns false for a key with no live timer, and refuses a malformed key', async () => {
    const h = await backend.open();
    expect(await h.timers.cancel('nothing')).toBe(false);
    await expect(h.timers.cancel('no spaces')).rejects.toMatchObject({ reason: 'invalid', field: 'key' });
  });

  it('cancel aborts the signal of a running handler, and its completion changes nothing', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'k', handler: 'work', every: 100, payload: { sleepMs: 2_000 } }); // on the backend's clock: virtual for memory; a real short wait on Redis
    const run = await h.started({ key: 'k' });
    expect(run.signal.aborted).toBe(false);
    await h.timers.cancel('k');
    await h.until(() => run.signal.aborted, { what: 'the abort' });
    expect(await h.event({ type: 'stale', key: 'k' })).toMatchObject({ version: 1, reason: 'gone' });
    await h.pass(300);
    expect(h.runs).toHaveLength(1);
    expect(h.eventsOf('completed')).toEqual([]);
    expect(await h.timers.get('k')).toBeNull();
  });

  it('cancelAll(scope) cancels every key in the scope and returns the count', async () => {
    const h = await backend.open();
    for (const key of ['invoice:1:a', 'invoice:1:b', 'invoice:2:a', 'user:1']) {
      await h.timers.schedule({ key, handler: 'work', delay: '1h' });
    }
    expect(await h.timers.cancelAll('invoice:1:')).toBe(2);
    expect((await h.timers.list()).items.map((t) => t.key)).toEqual(['invoice:2:a', 'user:1']);
    await h.until(() => h.eventsOf('cancelled').length === 2, { what: 'two cancelled events' });
    expect(
      h
        .eventsOf('cancelled')
        .map((e) => [e.key, e.reason])
        .sort(),
    ).toEqual([
      ['invoice:1:a', 'cancelled'],
      ['invoice:1:b', 'cancelled'],
    ]);
    await h.pass(50);
    expect(h.eventsOf('reset')).toEqual([]);
  });

  it('cancelAll() cancels everything with reason reset, emits one reset, and leaves tombstones', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'a', handler: 'work', delay: 100 });
    await h.timers.schedule({ key: 'b', handler: 'work', every: 100 });
    expect(await h.timers.cancelAll()).toBe(2);
    expect(await h.event({ type: 'reset' })).toMatchObject({
      id: '',
      key: '',
      version: 0,
      kind: null,
      count: 2,
    });
    expect(h.eventsOf('cancelled').map((e) => e.reason)).toEqual(['reset', 'reset']);
    await h.pass(300);
    expect(h.runs).toEqual([]);
    // a reset leaves tombstones too: a cancelled name stays cancelled
    expect(
      await h.timers.schedule({ key: 'a', handler: 'work', delay: 100, ifExists: 'keep' }),
    ).toMatchObject({
      status: 'cancelled',
    });
  });

  it('cancelAll refuses a malformed scope', async () => {
    const h = await backend.open();
    await expect(h.timers.cancelAll('bad scope')).rejects.toMatchObject({
      reason: 'invalid',
      field: 'prefix',
    });
  });

  it('cancel and cancelAll drop a finished row silently, without counting it', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'a', handler: 'work', delay: 10, removeOnComplete: false });
    await h.timers.schedule({ key: 'b', handler: 'work', delay: 10, removeOnComplete: false });
    await h.timers.schedule({ key: 'c', handler: 'work', delay: '1h' });
    await h.until(() => h.eventsOf('completed').length === 2, { what: 'a and b to complete' });
    expect(await h.timers.cancel('a')).toBe(false);
    expect(await h.timers.get('a')).toBeNull();
    expect(await h.timers.cancelAll()).toBe(1);
    expect(await h.timers.get('b')).toBeNull();
    await h.event({ type: 'reset' });
    expect(h.eventsOf('cancelled').map((e) => e.key)).toEqual(['c']);
  });

  it('cancelOutcome tells apart a live timer cancelled, a kept ended row removed (its status), no row', async () => {
    const h = await backend.open();
    const kept = { handler: 'work', delay: 10, removeOnComplete: false };
    await h.timers.schedule({ key: 'done', ...kept });
    await h.timers.schedule({ key: 'bad', ...kept, payload: { fail: 'down' } });
    await h.timers.schedule({ key: 'live', handler: 'work', delay: '1h' });
    await h.until(
      async () =>
        (await h.timers.get('done'))?.status === 'completed' &&
        (await h.timers.get('bad'))?.status === 'failed',
      { what: 'done completed and bad failed' },
    );
    expect(await h.timers.cancelOutcome('done', { requestId: 'r-done' })).toBe('completed');
    expect(await h.timers.get('done')).toBeNull();
    // the removal changed something: the same request answers it again, as cancel's `false` too
    expect(await h.timers.cancelOutcome('done', { requestId: 'r-done' })).toBe('completed');
    expect(await h.timers.cancel('done', { requestId: 'r-done' })).toBe(false);
    expect(await h.timers.cancelOutcome('bad')).toBe('failed');
    expect(await h.timers.get('bad')).toBeNull();
    expect(await h.timers.cancelOutcome('live')).toBe('cancelled');
    expect(await h.timers.cancelOutcome('live')).toBeNull();
    // a cancel of nothing changed nothing and is not remembered: its retry cancels what came meanwhile
    expect(await h.timers.cancelOutcome('later', { requestId: 'r-later' })).toBeNull();
    await h.timers.schedule({ key: 'later', handler: 'work', delay: '1h' });
    expect(await h.timers.cancel('later', { requestId: 'r-later' })).toBe(true);
    await h.eventsOnceCome('cancelled', 2);
    expect(h.eventsOf('cancelled').map((e) => e.key)).toEqual(['live', 'later']);
  });
});
