/**
 * docs/spec.md §3.6 on every backend: get, list, check, snapshot.
 */
import { BACKENDS, useBackend } from './backends';

describe.each(BACKENDS)('%s backend: get, list, check, snapshot', (name) => {
  const backend = useBackend(name);

  it('lists live timers filtered by prefix and status, a page at a time', async () => {
    const h = await backend.open();
    for (const key of ['b:2', 'a:1', 'b:1', 'b:3', 'c:1'])
      await h.timers.schedule({ key, handler: 'work', delay: '1h' });
    await h.timers.pause('b:3');
    // Key order on every backend (on Redis across its two partitions), the cursor null on the last page.
    const first = await h.timers.list({ prefix: 'b:', limit: 2 });
    expect(first.items.map((t) => t.key)).toEqual(['b:1', 'b:2']);
    const second = await h.timers.list({ prefix: 'b:', limit: 2, cursor: first.nextCursor! });
    expect(second.items.map((t) => t.key)).toEqual(['b:3']);
    expect(second.nextCursor).toBeNull();
    expect((await h.timers.list({ status: 'paused' })).items).toEqual([
      expect.objectContaining({ key: 'b:3', status: 'paused' }),
    ]);
    expect((await h.timers.list()).items.map((t) => t.key)).toEqual(['a:1', 'b:1', 'b:2', 'b:3', 'c:1']);
  });

  it('refuses a cursor of a list of another prefix or filter (it answered from the cursor, silently)', async () => {
    const h = await backend.open();
    for (const key of ['a:1', 'a:2', 'b:1', 'c:1'])
      await h.timers.schedule({ key, handler: 'work', delay: '1h' });
    const otherList = {
      reason: 'invalid',
      field: 'cursor',
      message: expect.stringContaining('another prefix or filter'),
      detail: { code: 'cursor-other-list' },
    };
    // a client that changed the prefix and kept the cursor: past every key of 'a:' it answered an empty page
    const ofAll = (await h.timers.list({ limit: 1 })).nextCursor!;
    await expect(h.timers.list({ prefix: 'a:', cursor: ofAll })).rejects.toMatchObject(otherList);
    await expect(h.timers.list({ status: 'pending', cursor: ofAll })).rejects.toMatchObject(otherList);
    const ofA = (await h.timers.list({ prefix: 'a:', limit: 1 })).nextCursor!;
    await expect(h.timers.list({ cursor: ofA })).rejects.toMatchObject(otherList);
    await expect(h.timers.list({ prefix: 'b:', cursor: ofA })).rejects.toMatchObject(otherList);
    // the same list goes on, whatever the limit
    expect((await h.timers.list({ prefix: 'a:', limit: 5, cursor: ofA })).items.map((t) => t.key)).toEqual([
      'a:2',
    ]);
    // due order: the cursor is its prefix's and its dueBefore's
    const dueBefore = (await h.now()) + 7_200_000;
    const byDue = (await h.timers.list({ dueBefore, limit: 1 })).nextCursor!;
    await expect(h.timers.list({ dueBefore, prefix: 'c:', cursor: byDue })).rejects.toMatchObject(otherList);
    await expect(h.timers.list({ dueBefore: dueBefore - 1, cursor: byDue })).rejects.toMatchObject(otherList);
    expect((await h.timers.list({ dueBefore, cursor: byDue })).items).toHaveLength(3);
  });

  it('goes on from a cursor of the previous release, which named no list (a cursor before the prefix starts at it)', async () => {
    const h = await backend.open();
    for (const key of ['a', 'b', 'c']) await h.timers.schedule({ key, handler: 'work', delay: '1h' });
    const old = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    expect((await h.timers.list({ cursor: old({ after: 'a' }) })).items.map((t) => t.key)).toEqual([
      'b',
      'c',
    ]);
    expect(
      (await h.timers.list({ prefix: 'c', cursor: old({ after: 'a' }) })).items.map((t) => t.key),
    ).toEqual(['c']);
    const due = (await h.timers.get('a'))!.dueAt;
    const dueBefore = (await h.now()) + 7_200_000;
    expect((await h.timers.list({ dueBefore, cursor: old([due, 'a']) })).items.map((t) => t.key)).toEqual([
      'b',
      'c',
    ]);
  });

  it('lists pending timers due by dueBefore in due order, a page at a time (the UI timeline)', async () => {
    const h = await backend.open();
    const now = await h.now();
    // b and c share a due (then key order decides); p is paused; z is due after the horizon.
    const minutes = { d: 30, a: 40, c: 10, b: 10, p: 5, z: 120 };
    for (const [key, m] of Object.entries(minutes))
      await h.timers.schedule({ key, handler: 'work', at: now + m * 60_000 });
    await h.timers.pause('p');
    const dueBefore = now + 3_600_000;
    const first = await h.timers.list({ dueBefore, limit: 3 });
    const second = await h.timers.list({ dueBefore, limit: 3, cursor: first.nextCursor! });
    expect(first.items.map((t) => t.key)).toEqual(['b', 'c', 'd']);
    expect(second).toEqual({
      items: [expect.objectContaining({ key: 'a', status: 'pending' })],
      nextCursor: null,
    });
    expect((await h.timers.list({ dueBefore, prefix: 'c' })).items.map((t) => t.key)).toEqual(['c']);
    await expect(h.timers.list({ dueBefore, status: 'paused' })).rejects.toMatchObject({ field: 'status' });
    await expect(h.timers.list({ dueBefore: Number.NaN })).rejects.toMatchObject({ field: 'dueBefore' });
  });

  it('refuses bad list options', async () => {
    const h = await backend.open();
    // one text on every backend (Redis said "limit must be an integer from 1 to 1000, got 0.")
    await expect(h.timers.list({ limit: 0 })).rejects.toMatchObject({
      message: 'limit 0 is not a whole number from 1 to 1000',
      fix: 'Write limit as a whole number from 1 to 1000, e.g. 100.',
    });
    await expect(h.timers.list({ status: 'gone' as never })).rejects.toMatchObject({
      message: 'status "gone" is not a timer status',
      fix: 'Write one of pending, running, paused, completed, failed, cancelled.',
    });
    // the first bad field in one order: the prefix first
    await expect(h.timers.list({ prefix: 'a b', limit: 0 })).rejects.toMatchObject({ field: 'prefix' });
    await expect(h.timers.list({ limit: 0 })).rejects.toMatchObject({ field: 'limit' });
    await expect(h.timers.list({ status: 'gone' as never })).rejects.toMatchObject({ field: 'status' });
    await expect(h.timers.list({ prefix: 'a b' })).rejects.toMatchObject({ field: 'prefix' });
    await expect(h.timers.list({ cursor: 5 as never })).rejects.toMatchObject({ field: 'cursor' });
  });

  it('refuses a cursor list() did not return, or returned for the other order', async () => {
    const h = await backend.open();
    for (const key of ['a', 'b', 'c']) await h.timers.schedule({ key, handler: 'work', delay: '1h' });
    const { nextCursor } = await h.timers.list({ limit: 1 });
    const byDue = (await h.timers.list({ limit: 1, dueBefore: (await h.now()) + 7_200_000 })).nextCursor!;
    // the engine took any text as the key to go on after: a key, or a cursor of the other order
    const bad = { reason: 'invalid', field: 'cursor', message: 'The cursor is not one list() returned.' };
    for (const cursor of ['a', 'zzz']) await expect(h.timers.list({ cursor })).rejects.toMatchObject(bad);
    // one of the other order is one list() returned, for a list with(out) dueBefore: a list of another filter
    // (over HTTP it was told it was no page's nextCursor)
    const otherList = { reason: 'invalid', field: 'cursor', detail: { code: 'cursor-other-list' } };
    await expect(h.timers.list({ cursor: byDue })).rejects.toMatchObject(otherList);
    await expect(h.timers.list({ dueBefore: 1, cursor: nextCursor! })).rejects.toMatchObject(otherList);
    expect((await h.timers.list({ cursor: nextCursor! })).items.map((t) => t.key)).toEqual(['b', 'c']);
  });

  it('check and snapshot follow which ids are live', async () => {
    const h = await backend.open();
    const a = await h.timers.schedule({ key: 'a', handler: 'work', delay: 10 });
    const b = await h.timers.schedule({ key: 'b', handler: 'work', delay: '1h' });
    const c = await h.timers.schedule({ key: 'c', handler: 'work', delay: '1h' });
    expect((await h.timers.snapshot()).sort()).toEqual([a.id, b.id, c.id].sort());
    await h.event({ type: 'completed', key: 'a' });
    await h.timers.cancel('b');
    expect(await h.timers.snapshot()).toEqual([c.id]);
    expect([await h.timers.check(a.id), await h.timers.check(b.id), await h.timers.check(c.id)]).toEqual([
      false,
      false,
      true,
    ]);
    expect(await h.timers.check('999')).toBe(false);
    await expect(h.timers.get('bad key')).rejects.toMatchObject({ field: 'key' });
  });

  it('the explain reads refuse a bad count or limit before looking the key up, on every backend', async () => {
    const h = await backend.open();
    const bad = (field: string) => ({ reason: 'invalid', field });
    await expect(h.timers.describe('nope', { limit: 0 })).rejects.toMatchObject(bad('limit'));
    await expect(h.timers.describe('nope', { count: 0 })).rejects.toMatchObject(bad('count'));
    await expect(h.timers.next('nope', { count: 101 })).rejects.toMatchObject(bad('count'));
    await expect(h.timers.history('nope', { limit: 201 })).rejects.toMatchObject(bad('limit'));
    await expect(h.timers.history('a b', { limit: 0 })).rejects.toMatchObject(bad('limit'));
    await expect(h.timers.next('a b', { count: 0 })).rejects.toMatchObject(bad('count'));
    await expect(h.timers.describe('nope')).rejects.toMatchObject({ reason: 'not-found' });
  });

  it('check refuses an id that is not a string, and answers false for a string that is no id', async () => {
    const h = await backend.open();
    for (const id of [3, null, undefined, { id: '1' }]) {
      await expect(h.timers.check(id as never)).rejects.toMatchObject({ reason: 'invalid', field: 'id' });
    }
    expect(await h.timers.check('07p1')).toBe(false);
  });
});
