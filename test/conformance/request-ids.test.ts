/**
 * docs/spec.md §5.1 `requestId` on every backend (issue 8 defect 2, docs/design.md "Repeated calls"): a
 * write retried with the same id and arguments returns the first result and changes nothing more; the
 * same id with other arguments is refused `idempotency-conflict`; a refused call is not remembered.
 */
import { BACKENDS, useBackend } from './backends';

describe.each(BACKENDS)('%s backend: requestId', (name) => {
  const backend = useBackend(name);
  const spec = { key: 'k', handler: 'work', delay: '1h' } as const;

  it('schedule retried: the same timer, one scheduled event, no duplicate-key', async () => {
    const h = await backend.open();
    const first = await h.timers.schedule(spec, { requestId: 'r1' });
    expect(await h.timers.schedule(spec, { requestId: 'r1' })).toEqual(first);
    await h.event({ type: 'scheduled', key: 'k' });
    await expect(h.timers.schedule(spec)).rejects.toMatchObject({ reason: 'duplicate-key' });
    await h.pass(50);
    expect(h.eventsOf('scheduled')).toHaveLength(1);
  });

  it('cancel, cancelAll, reschedule, pause, resume and trigger retried: the first answers, applied once', async () => {
    const h = await backend.open();
    await h.timers.scheduleMany(
      ['a', 'b', 'c:1', 'c:2'].map((key) => ({ key, handler: 'work', delay: '1h' as const })),
    );
    expect(await h.timers.cancel('a', { requestId: 'c' })).toBe(true);
    expect(await h.timers.cancel('a', { requestId: 'c' })).toBe(true);
    expect(await h.timers.cancel('a')).toBe(false);
    expect(await h.timers.cancelAll('c:', { requestId: 'all' })).toBe(2);
    expect(await h.timers.cancelAll('c:', { requestId: 'all' })).toBe(2);
    const moved = await h.timers.reschedule('b', { delay: '2h' }, { requestId: 'm' });
    expect(await h.timers.reschedule('b', { delay: '2h' }, { requestId: 'm' })).toEqual(moved);
    const paused = await h.timers.pause('b', { requestId: 'p' });
    expect(await h.timers.pause('b', { requestId: 'p' })).toEqual(paused);
    const resumed = await h.timers.resume('b', { requestId: 'u' });
    expect(await h.timers.resume('b', { requestId: 'u' })).toEqual(resumed);
    const triggered = await h.timers.trigger('b', { requestId: 't' });
    expect(await h.timers.trigger('b', { requestId: 't' })).toEqual(triggered);
    expect(triggered.version).toBe(moved.version + 3);
    await h.until(() => h.runs.length > 0, { what: 'the trigger run' });
    await h.pass(200);
    expect(h.runs.map((run) => run.key)).toEqual(['b']);
  });

  it('backfill retried after its timer moved on or ended: the first answer, nothing run again', async () => {
    const h = await backend.open();
    const timer = await h.timers.schedule({ key: 'b', handler: 'work', every: '1h' });
    const range = { from: timer.scheduledAt - 3 * 3_600_000 + 1, to: timer.scheduledAt - 1 };
    expect(await h.timers.backfill('b', range, { requestId: 'bf' })).toEqual({ slots: 2 });
    await h.until(() => h.runs.length === 2, { what: 'the two backfill runs' });
    expect(await h.timers.backfill('b', range, { requestId: 'bf' })).toEqual({ slots: 2 });
    expect(await h.timers.cancel('b')).toBe(true);
    expect(await h.timers.backfill('b', range, { requestId: 'bf' })).toEqual({ slots: 2 });
    await h.pass(200);
    expect(h.runs).toHaveLength(2);
  });

  it('a global cancelAll retried: one reset event, as the one reset that happened', async () => {
    const h = await backend.open();
    await h.timers.schedule(spec);
    expect(await h.timers.cancelAll('', { requestId: 'all' })).toBe(1);
    expect(await h.timers.cancelAll('', { requestId: 'all' })).toBe(1);
    await h.event({ type: 'reset' });
    await h.pass(300); // a second reset, were one published, comes within it
    expect(h.eventsOf('reset').map((event) => event.count)).toEqual([1]);
  });

  it('the same id with other arguments: idempotency-conflict, nothing written; a malformed id: invalid', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'a', handler: 'work', delay: '1h' }, { requestId: 'x' });
    await expect(
      h.timers.schedule({ key: 'b', handler: 'work', delay: '1h' }, { requestId: 'x' }),
    ).rejects.toMatchObject({ reason: 'idempotency-conflict', field: 'requestId' });
    await expect(h.timers.cancel('a', { requestId: 'x' })).rejects.toMatchObject({
      reason: 'idempotency-conflict',
    });
    expect(await h.timers.get('b')).toBeNull();
    expect(await h.timers.get('a')).not.toBeNull();
    for (const requestId of ['has space', '', 'x'.repeat(256), 'é']) {
      await expect(h.timers.cancel('a', { requestId })).rejects.toMatchObject({
        reason: 'invalid',
        field: 'requestId',
      });
    }
    expect(await h.timers.get('a')).not.toBeNull();
  });

  it('the same arguments with their fields in another order are a retry, not a conflict', async () => {
    const h = await backend.open();
    const payload = { b: 2, a: { d: 4, c: 3 } };
    const first = await h.timers.schedule({ ...spec, payload }, { requestId: 'o' });
    const reordered = { delay: spec.delay, payload: { a: { c: 3, d: 4 }, b: 2 }, handler: 'work', key: 'k' };
    expect(await h.timers.schedule(reordered, { requestId: 'o' })).toEqual(first);
    await expect(
      h.timers.schedule({ ...reordered, payload: { a: { c: 3, d: 5 }, b: 2 } }, { requestId: 'o' }),
    ).rejects.toMatchObject({ reason: 'idempotency-conflict' });
  });

  it('a refused call is not remembered: its retry runs again, and its id is free for another call', async () => {
    const h = await backend.open();
    await expect(h.timers.pause('k', { requestId: 'p' })).rejects.toMatchObject({ reason: 'not-found' });
    await h.timers.schedule(spec);
    expect(await h.timers.pause('k', { requestId: 'p' })).toMatchObject({ status: 'paused' });
    await expect(h.timers.schedule(spec, { requestId: 'd' })).rejects.toMatchObject({
      reason: 'duplicate-key',
    });
    expect(await h.timers.cancel('k', { requestId: 'd' })).toBe(true);
  });

  it('unlessAnswered: once that schedule request was answered, the call is refused duplicate-key unchanged', async () => {
    const h = await backend.open();
    await h.timers.schedule(spec);
    // PUT's two calls (docs/spec.md §5.2): the create refused, the replace answered, the timer cancelled
    const create = { requestId: 'put:c', unlessAnswered: 'put:r' };
    await expect(h.timers.schedule(spec, create)).rejects.toMatchObject({ reason: 'duplicate-key' });
    const replaced = await h.timers.schedule({ ...spec, ifExists: 'replace' }, { requestId: 'put:r' });
    expect(await h.timers.cancel('k')).toBe(true);
    await expect(h.timers.schedule(spec, create)).rejects.toMatchObject({ reason: 'duplicate-key' });
    expect(await h.timers.get('k')).toBeNull();
    expect(await h.timers.schedule({ ...spec, ifExists: 'replace' }, { requestId: 'put:r' })).toEqual(
      replaced,
    );
    // a request refused (not answered) or never sent takes nothing: the call runs
    await h.timers.schedule({ ...spec, key: 'b' });
    await expect(h.timers.schedule({ ...spec, key: 'b' }, { requestId: 'dup' })).rejects.toMatchObject({
      reason: 'duplicate-key',
    });
    expect(await h.timers.cancel('b')).toBe(true);
    const once = { requestId: 'once', unlessAnswered: 'dup' };
    expect(await h.timers.schedule({ ...spec, key: 'b' }, once)).toMatchObject({ status: 'pending' });
    expect(await h.timers.schedule(spec, { unlessAnswered: 'never' })).toMatchObject({ key: 'k' });
    await expect(
      h.timers.schedule({ ...spec, key: 'c' }, { unlessAnswered: 'has space' }),
    ).rejects.toMatchObject({ reason: 'invalid', field: 'unlessAnswered' });
    expect(await h.timers.get('c')).toBeNull();
  });

  it('unlessAnswered naming a request of another operation: not a schedule answered, the call goes on', async () => {
    const h = await backend.open();
    await h.timers.schedule(spec);
    await h.timers.pause('k', { requestId: 'p' });
    // the engine counted any request answered: duplicate-key
    const replace = { ...spec, delay: '2h', ifExists: 'replace' } as const;
    expect(await h.timers.schedule(replace, { unlessAnswered: 'p' })).toMatchObject({ status: 'pending' });
  });

  it('partOf: the id of a request of several calls is refused to any other request, either way round', async () => {
    const h = await backend.open();
    await h.timers.schedule(spec);
    // PUT's two calls (docs/spec.md §5.2), both part of the request its Idempotency-Key names
    const partOf = { requestId: 'K', operation: 'PUT', args: [spec] };
    const create = { requestId: 'put:c', unlessAnswered: 'put:r', partOf };
    await expect(h.timers.schedule(spec, create)).rejects.toMatchObject({ reason: 'duplicate-key' });
    const replace = { ...spec, delay: '2h', ifExists: 'replace' } as const;
    const replaced = await h.timers.schedule(replace, { requestId: 'put:r', partOf });
    // the key as another call's requestId, or as another request's: refused, nothing changed
    await expect(h.timers.schedule({ ...spec, key: 'b' }, { requestId: 'K' })).rejects.toMatchObject({
      reason: 'idempotency-conflict',
      field: 'requestId',
    });
    await expect(h.timers.pause('k', { requestId: 'K' })).rejects.toMatchObject({
      reason: 'idempotency-conflict',
    });
    const other = { requestId: 'K', operation: 'PUT', args: [{ ...spec, key: 'b' }] };
    await expect(
      h.timers.schedule({ ...spec, key: 'b' }, { requestId: 'put2:c', partOf: other }),
    ).rejects.toMatchObject({ reason: 'idempotency-conflict', field: 'partOf.requestId' });
    expect(await h.timers.get('b')).toBeNull();
    expect(await h.timers.get('k')).toEqual(replaced);
    // the request retried: each call answers as it did
    await expect(h.timers.schedule(spec, create)).rejects.toMatchObject({ reason: 'duplicate-key' });
    expect(await h.timers.schedule(replace, { requestId: 'put:r', partOf })).toEqual(replaced);
    // the other way round: a call's requestId first, then a request's partOf naming it
    await h.timers.pause('k', { requestId: 'P' });
    await expect(
      h.timers.schedule({ ...spec, key: 'c' }, { requestId: 'c1', partOf: { ...partOf, requestId: 'P' } }),
    ).rejects.toMatchObject({ reason: 'idempotency-conflict', field: 'partOf.requestId' });
    expect(await h.timers.get('c')).toBeNull();
    // nor may the request's id be its own call's
    await expect(
      h.timers.schedule({ ...spec, key: 'c' }, { requestId: 'Q', partOf: { ...partOf, requestId: 'Q' } }),
    ).rejects.toMatchObject({ reason: 'idempotency-conflict', field: 'requestId' });
    expect(await h.timers.get('c')).toBeNull();
  });

  it('partOf: a request whose steps an older release made without it, retried with it: answered as before', async () => {
    const h = await backend.open();
    await h.timers.schedule(spec);
    const create = { requestId: 'put:c', unlessAnswered: 'put:r' };
    const replace = { ...spec, delay: '2h', ifExists: 'replace' } as const;
    // an older scheduler's PUT: the same step ids, no partOf (nothing pinned under K)
    await expect(h.timers.schedule(spec, create)).rejects.toMatchObject({ reason: 'duplicate-key' });
    const replaced = await h.timers.schedule(replace, { requestId: 'put:r' });
    expect(await h.timers.cancel('k')).toBe(true);
    const partOf = { requestId: 'K', operation: 'PUT', args: [spec] };
    await expect(h.timers.schedule(spec, { ...create, partOf })).rejects.toMatchObject({
      reason: 'duplicate-key',
    });
    expect(await h.timers.schedule(replace, { requestId: 'put:r', partOf })).toEqual(replaced);
    expect(await h.timers.get('k')).toBeNull();
    // and from then on the key is that request's
    await expect(h.timers.cancel('k', { requestId: 'K' })).rejects.toMatchObject({
      reason: 'idempotency-conflict',
    });
  });

  it('partOf: a refused call lets go of the pin it made; malformed, refused after the arguments', async () => {
    const h = await backend.open();
    const partOf = { requestId: 'K', operation: 'PUT', args: [spec] };
    await expect(h.timers.pause('k', { partOf })).rejects.toMatchObject({ reason: 'not-found' });
    await expect(h.timers.pause('k', { requestId: 'p', partOf })).rejects.toMatchObject({
      reason: 'not-found',
    });
    expect(await h.timers.schedule(spec, { requestId: 'K' })).toMatchObject({ key: 'k' });
    const bad: [unknown, string][] = [
      [{ ...partOf, requestId: 'has space' }, 'partOf.requestId'],
      [{ ...partOf, operation: '' }, 'partOf.operation'],
      [{ ...partOf, args: 'x' }, 'partOf.args'],
      [null, 'partOf'],
    ];
    for (const [value, field] of bad) {
      await expect(
        h.timers.schedule({ ...spec, key: 'b' }, { partOf: value as typeof partOf }),
      ).rejects.toMatchObject({ reason: 'invalid', field });
    }
    await expect(
      h.timers.schedule({ ...spec, key: 'a b' }, { partOf: { ...partOf, requestId: 'has space' } }),
    ).rejects.toMatchObject({ reason: 'invalid', field: 'key' });
    expect(await h.timers.get('b')).toBeNull();
  });

  it('every pair of operations sharing an id: the second is refused idempotency-conflict, unchanged', async () => {
    const h = await backend.open();
    const interval = (key: string) => ({ key, handler: 'work', every: '1h' }) as const;
    const now = await h.now();
    const writes: Record<string, (key: string, o: { requestId: string }) => Promise<unknown>> = {
      schedule: (key, o) => h.timers.schedule({ ...interval(key), ifExists: 'replace' }, o),
      scheduleMany: (key, o) => h.timers.scheduleMany([{ ...interval(key), ifExists: 'replace' }], o),
      cancel: (key, o) => h.timers.cancel(key, o),
      cancelAll: (key, o) => h.timers.cancelAll(key, o),
      reschedule: (key, o) => h.timers.reschedule(key, { delay: '3h' }, o),
      pause: (key, o) => h.timers.pause(key, o),
      resume: (key, o) => h.timers.resume(key, o),
      trigger: (key, o) => h.timers.trigger(key, o),
      backfill: (key, o) => h.timers.backfill(key, { from: now - 4 * 3_600_000, to: now - 1 }, o),
    };
    const names = Object.keys(writes);
    const slipped: string[] = [];
    for (const [n, first] of names.entries()) {
      for (const second of names.filter((name) => name !== first)) {
        const key = `pair:${n}:${second}`;
        await h.timers.schedule(interval(key));
        const o = { requestId: `${first}-${second}` };
        await writes[first](key, o);
        const before = await h.timers.get(key);
        const refused = await writes[second](key, o).then(
          () => false,
          (error: { reason?: string }) => error.reason === 'idempotency-conflict',
        );
        if (!refused) slipped.push(`${first} then ${second}`);
        else if (first !== 'trigger' && first !== 'backfill') expect(await h.timers.get(key)).toEqual(before);
      }
    }
    expect(slipped).toEqual([]);
    // cancel and cancelOutcome are one write: the same id answers either (§3.4)
    await h.timers.schedule(interval('c'));
    expect(await h.timers.cancelOutcome('c', { requestId: 'c' })).toBe('cancelled');
    expect(await h.timers.cancel('c', { requestId: 'c' })).toBe(true);
  });

  it('a cancel of nothing is not remembered either: its retry, once the key is scheduled, cancels it', async () => {
    const h = await backend.open();
    expect(await h.timers.cancel('k', { requestId: 'c0' })).toBe(false);
    await h.timers.schedule(spec);
    expect(await h.timers.cancel('k', { requestId: 'c0' })).toBe(true);
    expect(await h.timers.get('k')).toBeNull();
    expect(await h.timers.cancel('k', { requestId: 'c0' })).toBe(true);
  });

  it('malformed arguments are refused for themselves before the request id is looked at', async () => {
    const h = await backend.open();
    await h.timers.schedule(spec, { requestId: 'r' });
    // the engine answered idempotency-conflict (or the bad requestId) first; Redis the arguments
    const calls: [() => Promise<unknown>, string][] = [
      [() => h.timers.schedule({ ...spec, delay: '1hr' as never }, { requestId: 'r' }), 'delay'],
      [() => h.timers.scheduleMany([spec, { ...spec, key: 'a b' }], { requestId: 'r' }), 'specs[1].key'],
      [() => h.timers.reschedule('k', { at: 'soon' }, { requestId: 'r' }), 'at'],
      [() => h.timers.pause('a b', { requestId: 'r' }), 'key'],
      [() => h.timers.cancelAll('a b', { requestId: 'r' }), 'prefix'],
      [() => h.timers.backfill('k', { from: 'x', to: 1 }, { requestId: 'r' }), 'from'],
      [() => h.timers.cancel('', { requestId: 'has space' }), 'key'],
    ];
    for (const [call, field] of calls)
      await expect(call()).rejects.toMatchObject({ reason: 'invalid', field });
    await expect(h.timers.pause('k', { requestId: 'r' })).rejects.toMatchObject({
      reason: 'idempotency-conflict',
    });
  });
});
