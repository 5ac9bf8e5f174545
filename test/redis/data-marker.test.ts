import { repartition, SundialKeys } from '@sundial/redis';
import { DataMarker } from '../../libs/redis/src/infra/data-marker';
import { useStore } from './store-fixture';

/** docs/spec.md §4.1: Redis losing the timers is noticed; what keeps the data is no loss. */
describe('the data marker (P:epoch)', () => {
  const store = useStore();
  const marker = (prefix: string, partitions = 2) =>
    new DataMarker(store.raw, new SundialKeys(prefix, partitions));

  it('a first start on an empty Redis records it, and is no loss', async () => {
    const first = marker('dm-first');
    expect(await first.check()).toBeNull();
    expect(await store.raw.get('dm-first:epoch')).toMatch(/^\d+-[0-9a-f]{12}$/);
    expect(await first.check()).toBeNull();
    // a second process finds it and remembers it
    expect(await marker('dm-first').check()).toBeNull();
  });

  it('gone: the loss is told once, with when the data was first written; marker and count are written anew', async () => {
    const seen = marker('dm-gone');
    await seen.check();
    const since = Number((await store.raw.get('dm-gone:epoch'))!.split('-')[0]);
    await store.raw.del('dm-gone:epoch', 'dm-gone:partitions'); // what a FLUSHALL leaves of them

    expect(await seen.check()).toMatchObject({
      prefix: 'dm-gone',
      since,
      message: expect.stringContaining(`first written ${new Date(since).toISOString()}`),
      fix: expect.stringContaining('appendonly yes'),
    });
    expect(await store.raw.get('dm-gone:epoch')).not.toBeNull();
    expect(await store.raw.get('dm-gone:partitions')).toBe('2');
    expect(await seen.check()).toBeNull();
  });

  it('replaced: a process that saw the old marker tells the loss another one wrote anew', async () => {
    const slow = marker('dm-new');
    const fast = marker('dm-new');
    await Promise.all([slow.check(), fast.check()]);
    await store.raw.del('dm-new:epoch');
    expect(await fast.check()).not.toBeNull();
    expect(await slow.check()).not.toBeNull();
    expect([await fast.check(), await slow.check()]).toEqual([null, null]);
  });

  it('a repartition, moving every key to another count, is no loss', async () => {
    const timers = store.open({ prefix: 'dm-move', partitions: 2 });
    await timers.schedule({ key: 'a', handler: 'h', delay: '1h' });
    const seen = marker('dm-move');
    await seen.check();
    await repartition({ connection: store.url(), prefix: 'dm-move', to: 3 });
    expect(await store.raw.get('dm-move:partitions')).toBe('3');
    expect(await seen.check()).toBeNull();
  });
});
