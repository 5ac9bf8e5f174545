import type { ListOptions, ListResult } from '@sundial/core';
import { type RedisTimers, SundialKeys } from '@sundial/redis';
import Redis from 'ioredis';
import { TimerReads } from '../../libs/redis/src/client/timer-reads';
import { refusal, useStore } from './store-fixture';

/** These reads meet no cancelAll scope record (none is written here): nothing to sweep. */
const noSweep = (): Promise<void> => Promise.resolve();

const store = useStore();
const connections: Redis[] = [];
afterEach(() => Promise.all(connections.splice(0).map((redis) => redis.quit())));

const PARTITIONS = 4;
/** `p:00`, `p:01`, … — keys that sort as their numbers. */
const numbered = (stem: string, count: number) =>
  Array.from({ length: count }, (_, i) => `${stem}${String(i).padStart(2, '0')}`);

/**
 * docs/spec.md §3.6: `list` pages in key order across every partition, as the memory engine does — not
 * one partition's keys after another's — and its cursor goes on from the last key listed.
 */
describe('list in key order across partitions', () => {
  it('pages hold the keys in order, the first page the first keys of all partitions', async () => {
    const timers = store.open({ partitions: PARTITIONS });
    const keys = numbered('p:', 30);
    await timers.scheduleMany([...keys, 'a', 'q:1'].map((key) => ({ key, handler: 'h', delay: '1h' })));
    expect(new Set(keys.map((key) => timers.keys.partitionOf(key))).size).toBe(PARTITIONS);

    const pages = await walk((options) => timers.list(options), { prefix: 'p:', limit: 4 });

    expect(pages[0]).toEqual(keys.slice(0, 4));
    expect(pages.flat()).toEqual(keys);
    // Full pages, and no empty page after the last (the cursor is null once the keys end).
    expect(pages.map((page) => page.length)).toEqual([4, 4, 4, 4, 4, 4, 4, 2]);
    expect((await walk((options) => timers.list(options), { limit: 1000 })).flat()).toEqual([
      'a',
      ...keys,
      'q:1',
    ]);
  });

  it('with a status and a prefix', async () => {
    const timers = store.open({ partitions: PARTITIONS });
    const keys = numbered('p:', 30);
    await timers.scheduleMany([...keys, 'q:03'].map((key) => ({ key, handler: 'h', delay: '1h' })));
    const paused = keys.filter((_, i) => i % 3 === 1);
    for (const key of [...paused, 'q:03']) await timers.pause(key);

    const pages = await walk((options) => timers.list(options), { prefix: 'p:', status: 'paused', limit: 3 });

    expect(pages.flat()).toEqual(paused);
    expect(pages[0]).toEqual(paused.slice(0, 3));
  });

  it('goes on from the last key listed while keys come and go between pages: none lost, none twice', async () => {
    const timers = store.open({ partitions: PARTITIONS });
    await timers.scheduleMany(numbered('k:', 20).map((key) => ({ key, handler: 'h', delay: '1h' })));
    const schedule = (key: string) => timers.schedule({ key, handler: 'h', delay: '1h' });
    const between: (() => Promise<unknown>)[] = [
      // after k:00–k:03: one new key behind the cursor, one ahead; one listed key and one ahead cancelled
      async () => {
        await schedule('k:01a');
        await schedule('k:09a');
        await timers.cancel('k:02');
        await timers.cancel('k:10');
      },
      // after k:04–k:08: the key right after the cursor cancelled, a new last key
      async () => {
        await timers.cancel('k:09');
        await schedule('k:99');
      },
    ];

    const pages = await walk((options) => timers.list(options), { prefix: 'k:', limit: 4 }, between);

    expect(pages.flat()).toEqual([
      ...['k:00', 'k:01', 'k:02', 'k:03'],
      ...['k:04', 'k:05', 'k:06', 'k:07'],
      ...['k:08', 'k:09a', 'k:11', 'k:12', 'k:13', 'k:14', 'k:15', 'k:16', 'k:17', 'k:18', 'k:19', 'k:99'],
    ]);
  });

  it('a status matching few of many keys: short pages within a bounded read, every match once, in order', async () => {
    const timers = store.open({ partitions: PARTITIONS });
    const keys = Array.from({ length: 25_000 }, (_, i) => `m:${String(i).padStart(5, '0')}`);
    for (let n = 0; n < keys.length; n += 2500) {
      await timers.scheduleMany(keys.slice(n, n + 2500).map((key) => ({ key, handler: 'h', delay: '1h' })));
    }
    const matches = ['m:00007', 'm:15000', 'm:15001', 'm:24999'];
    for (const key of matches) await timers.pause(key);
    const { reads, indexKeysRead } = countingIndexReads(timers);

    const pages = await walk((options) => reads.list(options), { status: 'paused', limit: 2 });

    expect(pages.flat()).toEqual(matches);
    // 25,000 keys at about 10,000 index keys a call: at least three calls, each call's reads bounded.
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...indexKeysRead)).toBeLessThanOrEqual(2 * 10_000);
  }, 60_000);

  it('during a repartition, walks the old partitions too: each key once, in key order', async () => {
    const old = store.open({ prefix: 'rw', partitions: PARTITIONS });
    const keys = numbered('k:', 20);
    await old.scheduleMany(keys.map((key) => ({ key, handler: 'h', delay: '1h' })));
    // A client of 2 partitions that joined a repartition from 4: old {p2} and {p3} are walked after its
    // own {p0} and {p1} (on one node the same bases as old partitions 0 and 1).
    const reads = new TimerReads(store.raw, new SundialKeys('rw', 2), noSweep);
    reads.previous = old.keys;
    // One key of old partition 2 already in the index (and row) of new partition 0 as well.
    const both = keys.find((key) => old.keys.partitionOf(key) === 2)!;
    await store.raw.hset(`rw:{p0}:t:${both}`, await store.raw.hgetall(old.keys.row(both)));
    await store.raw.zadd('rw:{p0}:keys', 0, both);

    const pages = await walk((options) => reads.list(options), { limit: 3 });

    expect(pages.flat()).toEqual(keys);
    expect((await reads.list()).items.map((timer) => timer.key)).toEqual(keys);
  });

  it('refuses a cursor of the releases that listed partition by partition, and one not its own', async () => {
    const timers = store.open({ partitions: PARTITIONS });
    await timers.scheduleMany(numbered('k:', 5).map((key) => ({ key, handler: 'h', delay: '1h' })));
    const old = Buffer.from(JSON.stringify([1, 'k:02'])).toString('base64url');
    for (const cursor of [old, 'garbage', Buffer.from('{"after":3}').toString('base64url')]) {
      expect(await refusal(timers.list({ cursor }))).toMatchObject({ reason: 'invalid', field: 'cursor' });
    }
  });
});

/** Every page's keys, following the cursor; `between[i]` runs after page i + 1. */
async function walk(
  list: (options: ListOptions) => Promise<ListResult>,
  options: ListOptions,
  between: (() => Promise<unknown>)[] = [],
): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = await list({ ...options, cursor });
    pages.push(page.items.map((timer) => timer.key));
    cursor = page.nextCursor ?? undefined;
    await between[pages.length - 1]?.();
  } while (cursor);
  return pages;
}

/** The client's reads on a connection that counts the index keys (ZRANGEBYLEX) each `list` call reads. */
function countingIndexReads(timers: RedisTimers): { reads: TimerReads; indexKeysRead: number[] } {
  const redis = new Redis(store.url());
  connections.push(redis);
  const indexKeysRead: number[] = [];
  const wrapped = new Proxy(redis, {
    get(target, name, receiver) {
      if (name !== 'zrangebylex') return Reflect.get(target, name, receiver) as unknown;
      return async (...args: Parameters<Redis['zrangebylex']>) => {
        const keys = await target.zrangebylex(...args);
        indexKeysRead[indexKeysRead.length - 1] += keys.length;
        return keys;
      };
    },
  });
  const reads = new TimerReads(wrapped, timers.keys, noSweep);
  const list = reads.list.bind(reads);
  reads.list = (options) => {
    indexKeysRead.push(0);
    return list(options);
  };
  return { reads, indexKeysRead };
}
