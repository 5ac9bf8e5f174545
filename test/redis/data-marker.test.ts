import { type DataLoss, repartition, SundialKeys, watchPartitionCount } from '@sundial/redis';
import type { TimerEvent } from '@sundial/core';
import { waitFor } from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { DataMarker } from '../../libs/redis/src/infra/data-marker';
import { eventsOn, useStore } from './store-fixture';

/** docs/spec.md §4.1: Redis losing the timers is noticed; what keeps the data is no loss. */
describe('the data marker (P:epoch)', () => {
  const store = useStore();
  /** A process's marker: `P:epoch` and every partition's `P:{pN}:epoch`. */
  const marker = (prefix: string, partitions = 2) =>
    new DataMarker(store.raw, new SundialKeys(prefix, partitions));
  const watched = (prefix: string, partitions = 3) => marker(prefix, partitions);
  const resetsOn = (prefix: string) => eventsOn(store.raw, store.url(), prefix);

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

  it("a partition's marker gone (its Redis Cluster shard flushed): the loss names it, once; one reset", async () => {
    const resets = await resetsOn('dm-part');
    try {
      const seen = watched('dm-part', 3);
      expect(await seen.check()).toBeNull();
      const markers = await store.raw.mget(
        'dm-part:epoch',
        'dm-part:{p0}:epoch',
        'dm-part:{p1}:epoch',
        'dm-part:{p2}:epoch',
      );
      expect(markers).toEqual(Array(4).fill(expect.stringMatching(/^\d+-[0-9a-f]{12}$/)));
      await store.raw.del('dm-part:{p1}:epoch');

      const loss = await seen.check();
      expect(loss).toMatchObject({ partitions: [1], count: 3, all: false, reset: true, marker: markers[2] });
      expect(loss?.message).toContain("Redis lost Sundial's data under prefix 'dm-part' in partition 1 of 3");
      expect(await store.raw.get('dm-part:{p1}:epoch')).not.toBeNull();
      expect(await seen.check()).toBeNull();
      expect(await resets.all()).toEqual([expect.objectContaining({ type: 'reset', count: 0 })]);
    } finally {
      resets.close();
    }
  });

  it('several partitions lost at once, noticed by several processes side by side: each tells it, one reset', async () => {
    const resets = await resetsOn('dm-parts');
    try {
      const processes = [watched('dm-parts', 4), watched('dm-parts', 4), watched('dm-parts', 4)];
      await Promise.all(processes.map((process) => process.check()));
      await store.raw.del('dm-parts:{p0}:epoch', 'dm-parts:{p2}:epoch');
      const losses = await Promise.all(processes.map((process) => process.check()));
      expect(losses.map((loss) => loss?.partitions)).toEqual([
        [0, 2],
        [0, 2],
        [0, 2],
      ]);
      expect(losses.filter((loss) => loss?.reset)).toHaveLength(1);
      expect(await resets.all()).toEqual([expect.objectContaining({ type: 'reset' })]);
      expect(await Promise.all(processes.map((process) => process.check()))).toEqual([null, null, null]);
    } finally {
      resets.close();
    }
  });

  it('two shards lost seconds apart, one process seeing both at once: each loss has its reset', async () => {
    // A looks between the two losses, B only after both: B finds p1 written anew by A and p2 gone.
    const resets = await resetsOn('dm-two');
    try {
      const [a, b] = [watched('dm-two', 3), watched('dm-two', 3)];
      await Promise.all([a.check(), b.check()]);
      await store.raw.del('dm-two:{p1}:epoch');
      expect(await a.check()).toMatchObject({ partitions: [1], reset: true });
      await store.raw.del('dm-two:{p2}:epoch');
      // B finds p1's loss first, whose reset A claimed; A claims p2's, which its next look finds alone.
      expect(await b.check()).toMatchObject({ partitions: [1, 2], reset: false });
      expect(await a.check()).toMatchObject({ partitions: [2], reset: true });
      expect(await resets.all()).toEqual([
        expect.objectContaining({ type: 'reset', count: 0 }),
        expect.objectContaining({ type: 'reset', count: 0 }),
      ]);
    } finally {
      resets.close();
    }
  });

  it('P:epoch lost alone (the shard of the keys outside the partitions): said so, the timers intact', async () => {
    const seen = watched('dm-global', 2);
    await seen.check();
    await store.raw.del('dm-global:epoch', 'dm-global:partitions');
    const loss = await seen.check();
    expect(loss).toMatchObject({ partitions: [], all: false, reset: true });
    expect(loss?.message).toContain("under prefix 'dm-global' outside its partitions");
    expect(loss?.message).toContain('The timers are intact');
    expect(await store.raw.get('dm-global:partitions')).toBe('2');
  });

  it("data of a release before the partitions' markers (P:epoch, no P:{pN}:epoch): recorded, no loss", async () => {
    await store.raw.set('dm-roll:epoch', `${Date.now()}-0123456789ab`);
    await store.raw.set('dm-roll:partitions', '2');
    const seen = watched('dm-roll', 2);
    expect(await seen.check()).toBeNull();
    expect(await store.raw.exists('dm-roll:{p0}:epoch', 'dm-roll:{p1}:epoch')).toBe(2);
    expect(await seen.check()).toBeNull();
  });

  it("repartitions that create and remove partitions, several between two looks too (4→2→4), are no loss; a removed partition's marker goes with it", async () => {
    const timers = store.open({ prefix: 'dm-grow', partitions: 2 });
    await timers.schedule({ key: 'a', handler: 'h', delay: '1h' });
    const seen = watched('dm-grow', 2);
    expect(await seen.check()).toBeNull();
    await repartition({ connection: store.url(), prefix: 'dm-grow', to: 4 });
    // the look that finds the new count, then the one that records the new partitions, then one more
    expect([await seen.check(), await seen.check(), await seen.check()]).toEqual([null, null, null]);
    expect(await store.raw.exists('dm-grow:{p2}:epoch', 'dm-grow:{p3}:epoch')).toBe(2);
    // partitions 2 and 3 removed and created again: their markers are new ones, the count as before
    await repartition({ connection: store.url(), prefix: 'dm-grow', to: 2 });
    await repartition({ connection: store.url(), prefix: 'dm-grow', to: 4 });
    expect([await seen.check(), await seen.check()]).toEqual([null, null]);
    const shrunk = await repartition({ connection: store.url(), prefix: 'dm-grow', to: 2 });
    expect(shrunk.left).toEqual([]);
    expect(await store.raw.exists('dm-grow:{p2}:epoch', 'dm-grow:{p3}:epoch')).toBe(0);
    expect([await seen.check(), await seen.check()]).toEqual([null, null]);
    // and a partition lost after them is still noticed
    await store.raw.del('dm-grow:{p1}:epoch');
    expect(await seen.check()).toMatchObject({ partitions: [1], count: 2 });
  });

  it.each([
    // shrinking: partition 2 goes at the end, its keys not yet moved are lost
    { what: 'a partition it removes', from: 3, to: 2, lost: 2, of: 3 },
    // growing: partition 3 is new, the keys moved into it are lost
    { what: 'a partition it creates', from: 2, to: 4, lost: 3, of: 4 },
    // kept: partition 0 is in both counts
    { what: 'a partition both counts have', from: 2, to: 3, lost: 0, of: 2 },
  ])('a loss during a repartition, of $what, is told while it runs', async ({ from, to, lost, of }) => {
    const prefix = `dm-during-${from}-${to}`;
    const seen = watched(prefix, from);
    expect(await seen.check()).toBeNull();
    // What `repartition()` writes as it begins (the watch reads only this record and the count).
    const record = { from, to, state: 'moving', startedAt: Date.now() };
    await store.raw.set(`${prefix}:repartition`, JSON.stringify(record));
    // the look that finds the repartition, then the one that records its new count's partitions
    expect([await seen.check(), await seen.check()]).toEqual([null, null]);
    expect(await store.raw.exists(`${prefix}:{p${to - 1}}:epoch`)).toBe(1);
    await store.raw.del(`${prefix}:{p${lost}}:epoch`);
    const loss = await seen.check();
    expect(loss).toMatchObject({ partitions: [lost], count: of, all: false, reset: true });
    expect(await seen.check()).toBeNull();
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
    const stops = await Promise.all(
      Array.from({ length: watches }, () =>
        watchPartitionCount({
          connection: store.url(),
          prefix,
          intervalMs: 50,
          told: new Set<string>(), // each its own process
          onDataLost: (loss) => losses.push(loss),
        }),
      ),
    );
    const listener = new Redis(store.url());
    const resets: string[] = [];
    try {
      await listener.subscribe(`${prefix}:events`);
      listener.on('message', (_channel: string, message: string) => resets.push(message));
      // every watch has read the marker: the watch resolves once its first look is done
      await store.raw.del(`${prefix}:epoch`, `${prefix}:partitions`);
      await waitFor(() => (losses.length === watches ? true : undefined), {
        timeoutMs: 10_000, // deadline
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

  it('a marker lost and written anew first by a process started since: one survivor publishes the reset', async () => {
    const resets = await resetsOn('dm-fresh');
    try {
      const [a, b] = [watched('dm-fresh', 2), watched('dm-fresh', 2)];
      await Promise.all([a.check(), b.check()]);
      await store.raw.del(
        'dm-fresh:epoch',
        'dm-fresh:{p0}:epoch',
        'dm-fresh:{p1}:epoch',
        'dm-fresh:partitions',
      );
      // a process started after the loss never saw the old markers: to it, a first start
      expect(await watched('dm-fresh', 2).check()).toBeNull();
      const losses = await Promise.all([a.check(), b.check()]);
      expect(losses).toEqual([
        expect.objectContaining({ all: true }),
        expect.objectContaining({ all: true }),
      ]);
      expect(losses.filter((loss) => loss?.reset)).toHaveLength(1);
      expect(await resets.all()).toEqual([expect.objectContaining({ type: 'reset', count: 0 })]);
    } finally {
      resets.close();
    }
  });

  it('a watch of both the data and the count reads P:partitions and P:repartition once a look, and still tells a repartition', async () => {
    // The data check and the count watch each read them: two reads every 5 s per process, one of them spare.
    const prefix = 'dm-once';
    const monitor = await store.raw.monitor();
    const gets = new Map<string, number>();
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[0]?.toLowerCase() === 'get') gets.set(args[1], (gets.get(args[1]) ?? 0) + 1);
    });
    const replaced: string[] = [];
    const watchBoth = () =>
      watchPartitionCount({
        connection: store.url(),
        prefix,
        partitions: 2,
        intervalMs: 20,
        told: new Set<string>(),
        onDataLost: () => undefined,
        onReplaced: (refusal) => replaced.push(refusal.message),
      });
    const stop = await watchBoth();
    try {
      await waitFor(() => ((gets.get(`${prefix}:epoch`) ?? 0) >= 4 ? true : undefined), {
        what: 'four looks of the watch',
      });
      await stop();
      // MONITOR shows commands in the order Redis ran them: once this GET is seen, the watch's are too.
      await store.raw.get(`${prefix}:end`);
      await waitFor(() => gets.has(`${prefix}:end`) || undefined, { what: 'the monitor caught up' });
      const count = (name: string) => gets.get(`${prefix}:${name}`) ?? 0;
      // Each check (a look's, the connect's) reads P:epoch, then the layout once, and no look reads it
      // again (it did: one more read per look). The stop may cut the last check after its P:epoch.
      expect(count('epoch')).toBeGreaterThanOrEqual(4);
      for (const name of ['partitions', 'repartition'])
        expect([0, 1]).toContain(count('epoch') - count(name));
    } finally {
      monitor.disconnect();
      await stop();
    }
    // The shared read still tells a finished repartition to another count.
    const watch = await watchBoth();
    try {
      await store.raw.set(`${prefix}:partitions`, '4');
      await waitFor(() => replaced.length > 0 || undefined, { what: 'the new count told' });
      expect(replaced).toEqual([expect.stringContaining('4')]);
    } finally {
      await watch();
    }
  });

  it.each([
    { what: 'the data', prefix: 'dm-away', marker: 'dm-away:epoch' },
    // a partition's marker, as a watch wrote it (a client writes P:epoch only)
    { what: "a partition's data", prefix: 'dm-away-part', marker: 'dm-away-part:{p0}:epoch' },
  ])(
    'a client away while $what was lost tells its reset listeners once back: the reset published then went unheard',
    async ({ prefix, marker }) => {
      if (marker.includes('{')) await store.raw.set(marker, `${Date.now()}-0b0b0b0b0b0b`);
      const timers = store.open({ prefix });
      await timers.get('x'); // connected: the marker recorded
      const resets: TimerEvent[] = [];
      timers.on('reset', (event) => void resets.push(event));
      await timers.get('x'); // subscribed, and the markers read
      // Its subscriber connection cut, and meanwhile the marker written anew (the reset published then is lost).
      await store.raw
        .multi()
        .call('CLIENT', 'KILL', 'TYPE', 'pubsub')
        .set(marker, `${Date.now()}-0a0a0a0a0a0a`)
        .exec();
      await waitFor(() => resets.length > 0 || undefined, { what: 'the reset after the reconnect' });
      expect(resets).toEqual([expect.objectContaining({ type: 'reset', count: 0 })]);
    },
  );
});
