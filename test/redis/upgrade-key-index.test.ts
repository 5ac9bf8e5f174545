import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RedisTimers } from '@sundial/redis';
import { migrateKeyIndex, runScript } from '@sundial/redis';
import { indexedKeys, refusal, useStore } from './store-fixture';

const store = useStore();

/**
 * The layout fence of the release before the chunked key index: this one but that its callers send
 * the count alone (`#<count>#`, no `k`).
 */
const OLD_FENCE = readFileSync(
  join(__dirname, '../../libs/redis/src/store/commands/includes/layout-fence.lua'),
  'utf8',
).replace("'^#(%d+k)#(.*)$'", () => "'^#(%d+)#(.*)$'"); // a function: `$'` would be a pattern

/** Byte order, as Redis's lex ranges and `list`. */
const sorted = (keys: Iterable<string>) =>
  [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

/** Every key `list` returns for a scope, paged with its cursor `limit` at a time. */
async function listAll(timers: RedisTimers, prefix: string, limit: number): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await timers.list({ prefix, limit, cursor });
    keys.push(...page.items.map((timer) => timer.key));
    cursor = page.nextCursor ?? undefined;
  } while (cursor !== undefined);
  return keys;
}

/** Keys in three scopes, scheduled far ahead; resolves them. */
async function scheduleScopes(timers: RedisTimers): Promise<string[]> {
  const keys = ['a', 'b', 'c'].flatMap((scope) => Array.from({ length: 250 }, (_, n) => `${scope}:${n}`));
  await timers.scheduleMany(keys.map((key) => ({ key, handler: 'h', delay: '1h' })));
  return keys;
}

describe('the key index in chunks', () => {
  it('list and cancelAll(scope) read across chunk boundaries', async () => {
    const timers = store.open();
    const keys = await scheduleScopes(timers);
    expect(await indexedKeys(store.raw, timers.keys, 0)).toEqual(sorted(keys));
    expect((await store.raw.zcard(`${timers.keys.base(0)}kx`)) > 3).toBe(true);

    expect(await listAll(timers, 'b:', 40)).toEqual(sorted(keys.filter((key) => key.startsWith('b:'))));
    expect(await listAll(timers, '', 333)).toEqual(sorted(keys));
    expect(await timers.cancelAll('b:')).toBe(250);
    expect(await listAll(timers, 'b:', 40)).toEqual([]);
    expect(await listAll(timers, '', 100)).toEqual(sorted(keys.filter((key) => !key.startsWith('b:'))));
    expect(await timers.cancelAll()).toBe(500);
    expect(await store.raw.keys(`${timers.keys.base(0)}k*`)).toEqual([]);
  });
});

/**
 * A partition as the release before the chunked key index left it: its rows, and every key in the
 * one zset `P:{pN}:keys` (score 0), with no layout fence (never repartitioned).
 */
async function asOldRelease(timers: RedisTimers): Promise<string> {
  const base = timers.keys.base(0);
  const keys = await indexedKeys(store.raw, timers.keys, 0);
  const chunks = await store.raw.keys(`${base}k[cx]*`);
  await store.raw.del(...chunks, `${base}layout`);
  await store.raw.zadd(`${base}keys`, ...keys.flatMap((key) => [0, key]));
  return base;
}

describe('upgrade from the one `keys` zset to the chunked key index', () => {
  it('converts at start: list and cancelAll see every key, and the old release’s writes are refused', async () => {
    const writer = store.open();
    const keys = await scheduleScopes(writer);
    const base = await asOldRelease(writer);

    const timers = store.open({ prefix: writer.keys.prefix });
    expect(await listAll(timers, 'c:', 60)).toEqual(sorted(keys.filter((key) => key.startsWith('c:'))));
    expect(await store.raw.exists(`${base}keys`)).toBe(0);
    expect(await indexedKeys(store.raw, timers.keys, 0)).toEqual(sorted(keys));
    // no chunk a skiplist: the conversion adds a page at a time and splits before 128
    for (const chunk of await store.raw.keys(`${base}kc:*`)) {
      expect(await store.raw.object('ENCODING', chunk)).toBe('listpack');
    }
    // the layout fence now says 1k: the previous release's fence (its count alone) refuses its writes
    expect(await store.raw.get(`${base}layout`)).toBe('1k');
    await expect(
      store.raw.eval(`${OLD_FENCE}\nreturn 'written'`, 1, base, `#1#${timers.keys.prefix}`),
    ).rejects.toThrow('SUNDIAL_LAYOUT 1k');
    // this release's writes go on
    expect(await timers.cancelAll('a:')).toBe(250);
    await timers.schedule({ key: 'a:new', handler: 'h', delay: '1h' });
    expect(await listAll(timers, 'a:', 10)).toEqual(['a:new']);
  });

  it('converts page by page: a run cut off midway is finished by the next, a second finds nothing', async () => {
    const writer = store.open();
    const keys = await scheduleScopes(writer);
    const base = await asOldRelease(writer);
    const { keys: layout } = writer;
    const left = await runScript(
      store.raw,
      'migrate-keys',
      base,
      layout.ledgerSize,
      layout.prefix,
      '1k',
      100,
    );
    expect(left).toBe(keys.length - 100);
    expect(await migrateKeyIndex(store.raw, layout)).toBe(keys.length - 100);
    expect(await migrateKeyIndex(store.raw, layout)).toBe(0);
    expect(await indexedKeys(store.raw, layout, 0)).toEqual(sorted(keys));
  });

  it('leaves a fence of another count as it is: that count takes the writes', async () => {
    const writer = store.open();
    const base = writer.keys.base(0);
    await store.raw.set(`${base}layout`, '4');
    await migrateKeyIndex(store.raw, writer.keys);
    expect(await store.raw.get(`${base}layout`)).toBe('4');
    expect(await refusal(writer.schedule({ key: 'x', handler: 'h', delay: '1h' }))).toMatchObject({
      reason: 'unavailable',
    });
  });
});
