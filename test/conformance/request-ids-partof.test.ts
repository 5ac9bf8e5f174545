/**
 * docs/spec.md §5.1 `partOf` on every backend: the id of a request of several calls (the HTTP API's PUT:
 * a create, then on `duplicate-key` a replace) is that request's from its first call on. Between a create
 * refused `duplicate-key` and its replace, another request sent with the id was taken: the create let go
 * of the pin it had made and the replace made it again. And `partOf.args` JSON cannot write was a bare
 * TypeError.
 */
import { BACKENDS, useBackend } from './backends';

describe.each(BACKENDS)('%s backend: partOf', (name) => {
  const backend = useBackend(name);
  const spec = { key: 'k', handler: 'work', delay: '1h' } as const;
  const replace = { ...spec, delay: '2h', ifExists: 'replace' } as const;
  const partOf = { requestId: 'K', operation: 'PUT', args: [spec] };
  const create = { requestId: 'put:c', unlessAnswered: 'put:r', partOf };

  it('between a create refused duplicate-key and its replace, the id is no other request’s', async () => {
    const h = await backend.open();
    await h.timers.schedule(spec);
    await expect(h.timers.schedule(spec, create)).rejects.toMatchObject({ reason: 'duplicate-key' });
    // another request sent with the id at that instant: as a call's own id, or as another request's
    await expect(h.timers.schedule({ ...spec, key: 'b' }, { requestId: 'K' })).rejects.toMatchObject({
      reason: 'idempotency-conflict',
      field: 'requestId',
    });
    const other = { requestId: 'K', operation: 'PUT', args: [{ ...spec, key: 'b' }] };
    await expect(
      h.timers.schedule(
        { ...spec, key: 'b' },
        { requestId: 'put2:c', unlessAnswered: 'put2:r', partOf: other },
      ),
    ).rejects.toMatchObject({ reason: 'idempotency-conflict', field: 'partOf.requestId' });
    // another step of another request, named as the held one's is not: it takes nothing
    await expect(h.timers.pause('b', { requestId: 'other', partOf })).rejects.toMatchObject({
      reason: 'not-found',
    });
    expect(await h.timers.get('b')).toBeNull();
    const replaced = await h.timers.schedule(replace, { requestId: 'put:r', partOf });
    expect(await h.timers.get('k')).toEqual(replaced);
    // the request retried answers as it did; the id stays the request's
    await expect(h.timers.schedule(spec, create)).rejects.toMatchObject({ reason: 'duplicate-key' });
    expect(await h.timers.schedule(replace, { requestId: 'put:r', partOf })).toEqual(replaced);
    await expect(h.timers.cancel('k', { requestId: 'K' })).rejects.toMatchObject({
      reason: 'idempotency-conflict',
    });
  });

  it('the held pin goes with its next step when that is refused: the id is free again', async () => {
    const h = await backend.open();
    await h.timers.schedule(spec);
    await expect(h.timers.schedule(spec, create)).rejects.toMatchObject({ reason: 'duplicate-key' });
    // the step the create named, refused (changed nothing): the request was answered nothing
    await expect(h.timers.pause('gone', { requestId: 'put:r', partOf })).rejects.toMatchObject({
      reason: 'not-found',
    });
    expect(await h.timers.schedule({ ...spec, key: 'b' }, { requestId: 'K' })).toMatchObject({ key: 'b' });
    // a create whose key is free keeps nothing held: it was answered, and so is its id
    const c = { key: 'c', handler: 'work', delay: '1h' } as const;
    const whole = { requestId: 'C', operation: 'PUT', args: [c] };
    await h.timers.schedule(c, { requestId: 'put3:c', unlessAnswered: 'put3:r', partOf: whole });
    await expect(h.timers.pause('c', { requestId: 'C' })).rejects.toMatchObject({
      reason: 'idempotency-conflict',
    });
  });

  it('partOf.args JSON cannot write: invalid on partOf.args saying where, nothing written', async () => {
    const h = await backend.open();
    const cyclic: Record<string, unknown> = { key: 'b' };
    cyclic.self = cyclic;
    const bad: [unknown[], RegExp][] = [
      [[cyclic], /partOf\.args\[0\]\.self .*cycle/],
      [[{ n: 10n }], /partOf\.args\[0\]\.n is a bigint/],
    ];
    for (const [args, message] of bad) {
      for (const options of [
        { partOf: { ...partOf, args } },
        { requestId: 'r', partOf: { ...partOf, args } },
      ]) {
        await expect(h.timers.schedule({ ...spec, key: 'b' }, options)).rejects.toMatchObject({
          reason: 'invalid',
          field: 'partOf.args',
          message: expect.stringMatching(message),
          fix: expect.stringMatching(/JSON/),
        });
      }
    }
    expect(await h.timers.get('b')).toBeNull();
    // nothing pinned: the ids are free for another request
    expect(await h.timers.schedule({ ...spec, key: 'b' }, { requestId: 'K' })).toMatchObject({ key: 'b' });
    expect(await h.timers.pause('b', { requestId: 'r' })).toMatchObject({ status: 'paused' });
  });
});
