import { type DataLoss, repartition, SundialKeys, watchPartitionCount } from '@sundial/redis';
import type { TimerEvent } from '@sundial/core';
import { waitFor } from '@sundial/testing';
import { Redis } from 'ioredis';
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

  it('one loss, one reset: only the process whose SET NX wrote the new marker publishes it', async () => {
    const prefix = 'dm-one-reset';
    await store.raw.set(`${prefix}:epoch`, `${Date.now()}-000000000000`);
    const watches = 3;
    const losses: DataLoss[] = [];
    const stops = Array.from({ length: watches }, () =>
      watchPartitionCount({
        connection: store.url(),
        prefix,
        intervalMs: 50,
        told: new Set<string>(), // each its own process
        onDataLost: (loss) => losses.push(loss),
      }),
    );
    const listener = new Redis(store.url());
    const resets: string[] = [];
    try {
      await listener.subscribe(`${prefix}:events`);
      listener.on('message', (_channel: string, message: string) => resets.push(message));
      // every watch has read the marker (its first command is that GET) before the data goes
      await waitForWatchesToLook(store.raw, watches);
      await store.raw.del(`${prefix}:epoch`, `${prefix}:partitions`);
      await waitFor(() => (losses.length === watches ? true : undefined), {
        timeoutMs: 10_000,
        what: 'each watch to notice the loss',
      });
      // a message published now arrives after any reset the watches published
      await store.raw.publish(`${prefix}:events`, 'end');
      await waitFor(() => resets.includes('end') || undefined, { what: 'the end message' });
      expect(resets.filter((message) => message !== 'end').map((message) => JSON.parse(message))).toEqual([
        expect.objectContaining({ type: 'reset', count: 0 }),
      ]);
      expect(losses.filter((loss) => loss.reset)).toHaveLength(1);
    } finally {
      listener.disconnect();
      await Promise.all(stops.map((stop) => stop()));
    }
  });

  it('a client away while the data was lost tells its reset listeners once back: the reset published then went unheard', async () => {
    const timers = store.open({ prefix: 'dm-away' });
    await timers.get('x'); // connected: the marker recorded
    const resets: TimerEvent[] = [];
    timers.on('reset', (event) => void resets.push(event));
    await timers.get('x'); // subscribed, and the marker read
    // Its subscriber connection cut, and meanwhile the marker written anew (the reset published then is lost).
    await store.raw
      .multi()
      .call('CLIENT', 'KILL', 'TYPE', 'pubsub')
      .set('dm-away:epoch', `${Date.now()}-0a0a0a0a0a0a`)
      .exec();
    await waitFor(() => resets.length > 0 || undefined, { what: 'the reset after the reconnect' });
    expect(resets).toEqual([expect.objectContaining({ type: 'reset', count: 0 })]);
  });
});

/** Until `count` watch connections have read the marker (their first command is that GET). */
async function waitForWatchesToLook(raw: Redis, count: number): Promise<void> {
  await waitFor(
    async () => {
      const list = (await raw.client('LIST')) as string;
      return (list.match(/name=sundial-watch .*cmd=get/g) ?? []).length >= count || undefined;
    },
    { what: 'the watches to read the marker' },
  );
}
