import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useStore } from './store-fixture';

const store = useStore();

/** The include under test with the one it includes, run as is by EVAL with a body after it (KEYS[1] = the partition base). */
const KEY_INDEX = ['key-stretches', 'key-index']
  .map((name) =>
    readFileSync(join(__dirname, `../../libs/redis/src/store/commands/includes/${name}.lua`), 'utf8'),
  )
  .join('\n');

let bases = 0;

/**
 * The key index of one fresh partition base, driven through its include's functions (every script's
 * way to it), with what Redis holds for it read back.
 */
function partition() {
  const base = `ki${++bases}:{p0}:`;
  const run = (body: string, ...args: string[]) => store.raw.eval(`${KEY_INDEX}\n${body}`, 1, base, ...args);
  return {
    base,
    add: async (keys: string[]) => Number(await run('return key_index_add(KEYS[1], ARGV)', ...keys)),
    remove: async (keys: string[]) => Number(await run('return key_index_remove(KEYS[1], ARGV)', ...keys)),
    has: async (keys: string[]) =>
      (await run(
        'local found = key_index_has(KEYS[1], ARGV) local out = {} for i, key in ipairs(ARGV) do out[i] = found[key] and 1 or 0 end return out',
        ...keys,
      )) as number[],
    range: async (min: string, max: string, limit: number, take = false) =>
      (await run(
        'return key_index_range(KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3]), ARGV[4] == "1")',
        min,
        max,
        String(limit),
        take ? '1' : '0',
      )) as string[],
    /** Each chunk that exists: its upper bound (null: the last chunk), encoding and keys, in order. */
    chunks: async () => {
      const bounds: (string | null)[] = await store.raw.zrange(`${base}kx`, 0, '-1');
      const chunks = await Promise.all(
        [...bounds, null].map(async (bound) => {
          const name = bound === null ? `${base}kc` : `${base}kc:${bound}`;
          return {
            bound,
            encoding: await store.raw.object('ENCODING', name),
            keys: await store.raw.zrange(name, 0, '-1'),
          };
        }),
      );
      return chunks.filter((chunk) => chunk.bound !== null || chunk.keys.length > 0);
    },
  };
}

/** Byte order, as Redis's lex ranges. */
const sorted = (keys: Iterable<string>) =>
  [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

/** `a` before `b` in byte order. */
const before = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b)) < 0;

/**
 * Every chunk a listpack of 1 to 127 keys, each key below its chunk's bound and not below the bound
 * before it; the keys in order are `expected`.
 */
async function expectWellFormed(index: ReturnType<typeof partition>, expected: Set<string>) {
  const chunks = await index.chunks();
  for (const [i, chunk] of chunks.entries()) {
    expect(chunk.keys.length).toBeGreaterThan(0);
    expect(chunk.keys.length).toBeLessThan(128);
    expect(chunk.encoding).toBe('listpack');
    const below = chunks[i - 1]?.bound;
    if (below) expect(before(chunk.keys[0], below)).toBe(false);
    if (chunk.bound !== null) expect(before(chunk.keys[chunk.keys.length - 1], chunk.bound)).toBe(true);
  }
  expect(chunks.flatMap((chunk) => chunk.keys)).toEqual(sorted(expected));
  expect(await index.range('-', '+', expected.size + 1)).toEqual(sorted(expected));
}

/** Redis's calls of each command since the last reset (INFO commandstats), the scripts and the reset left out. */
async function calls(): Promise<Record<string, number>> {
  const info = await store.raw.info('commandstats');
  const counts = [...info.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)].map(([, name, n]) => [name, Number(n)]);
  return Object.fromEntries(
    counts.filter(([name]) => !['eval', 'config|resetstat'].includes(name as string)),
  );
}

describe('key index (includes/key-index.lua)', () => {
  it('splits a chunk before it reaches 128 keys, so every chunk stays a listpack', async () => {
    const index = partition();
    const key = (n: number) => `k:${String(n).padStart(3, '0')}`;
    const keys = Array.from({ length: 127 }, (_, n) => key(2 * n));
    expect(await index.add(keys)).toBe(127);
    expect((await index.chunks()).map((chunk) => [chunk.bound, chunk.keys.length, chunk.encoding])).toEqual([
      [null, 127, 'listpack'],
    ]);
    // a key among its keys: the chunk is written anew as two even halves, the lower one bounded by the
    // upper one's first key, the upper one still the last chunk
    expect(await index.add([key(1)])).toBe(1);
    const chunks = await index.chunks();
    expect(chunks.map((chunk) => [chunk.bound, chunk.keys.length])).toEqual([
      [key(126), 64],
      [null, 64],
    ]);
    await expectWellFormed(index, new Set([...keys, key(1)]));
    // adding what is there changes nothing
    expect(await index.add([key(0), key(1), key(252)])).toBe(0);
    expect(await index.chunks()).toEqual(chunks);
  });

  it('keeps a full chunk as it is when keys come past its end (an ascending caller)', async () => {
    const index = partition();
    const key = (n: number) => `k:${String(n).padStart(4, '0')}`;
    const batches = Array.from({ length: 5 }, (_, b) =>
      Array.from({ length: 100 }, (_, n) => key(100 * b + n)),
    );
    for (const batch of batches) expect(await index.add(batch)).toBe(100);
    // each batch overfilled the last chunk: its keys were renamed under the batch's first key
    expect((await index.chunks()).map((chunk) => [chunk.bound, chunk.keys.length])).toEqual([
      [key(100), 100],
      [key(200), 100],
      [key(300), 100],
      [key(400), 100],
      [null, 100],
    ]);
    await expectWellFormed(index, new Set(batches.flat()));
  });

  it('keeps byte order across chunks through random adds and removes in batches, joining and deleting chunks', async () => {
    const index = partition();
    const model = new Set<string>();
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    // mixed case and punctuation: byte order, whatever the server's locale collates
    const key = () => `${'aB.:-_/@z'[Math.floor(random() * 9)]}${Math.floor(random() * 5000)}`;
    for (let round = 0; round < 40; round++) {
      // in any order, or ascending (runs the walk places by bisection)
      const adds = Array.from({ length: 1 + Math.floor(random() * 300) }, key);
      const ordered = round % 3 === 0 ? sorted(adds) : adds;
      const fresh = new Set(adds.filter((k) => !model.has(k)));
      expect(await index.add(ordered)).toBe(fresh.size);
      for (const k of adds) model.add(k);
      const present = [...model];
      const removes = Array.from({ length: Math.floor(random() * 250) }, () =>
        random() < 0.9 ? present[Math.floor(random() * present.length)] : key(),
      );
      const gone = new Set(removes.filter((k) => model.has(k)));
      expect(await index.remove(round % 2 === 0 ? sorted(removes) : removes)).toBe(gone.size);
      for (const k of removes) model.delete(k);
      const probe = [...present.slice(0, 50), key(), key()];
      expect(await index.has(round % 2 === 0 ? sorted(probe) : probe)).toEqual(
        (round % 2 === 0 ? sorted(probe) : probe).map((k) => (model.has(k) ? 1 : 0)),
      );
    }
    expect(model.size).toBeGreaterThan(1000);
    await expectWellFormed(index, model);

    // removals join small chunks: a tenth of the keys left in a third of the chunks or fewer
    const all = sorted(model);
    const kept = all.filter((_, i) => i % 10 === 0);
    const chunksBefore = (await index.chunks()).length;
    await index.remove(all.filter((_, i) => i % 10 !== 0));
    await expectWellFormed(index, new Set(kept));
    expect((await index.chunks()).length).toBeLessThanOrEqual(Math.ceil(chunksBefore / 3));

    // the last keys gone: no chunk and no bound left
    expect(await index.remove(kept)).toBe(kept.length);
    expect(await store.raw.keys(`${index.base}*`)).toEqual([]);
  });

  it('places ascending keys with one lookup per chunk they fall in, not per key', async () => {
    const index = partition();
    const key = (n: number) => `seq:${String(n).padStart(6, '0')}`;
    await index.add(Array.from({ length: 2000 }, (_, n) => key(2 * n)));
    const chunks = await index.chunks();
    expect(chunks.length).toBeGreaterThanOrEqual(20);
    // 100 keys between the even ones already there: they fall in two or three chunks
    const between = Array.from({ length: 100 }, (_, n) => key(2001 + 2 * n));
    const spanned = chunks.filter(
      (chunk, i) =>
        (chunk.bound === null || before(between[0], chunk.bound)) &&
        (i === 0 || !before(between[99], chunks[i - 1].bound!)),
    ).length;
    await store.raw.config('RESETSTAT');
    expect(await index.has(between)).toEqual(between.map(() => 0));
    expect(await index.add(between)).toBe(100);
    expect(await index.remove(between)).toBe(100);
    // per chunk, not per key: the bounds above a key read once per call (has and add share theirs), a
    // read, write and count per chunk, and the split the 100 keys cause
    const counted = await calls();
    expect(counted.zrangebylex).toBeLessThanOrEqual(3);
    const total = Object.values(counted).reduce((sum, n) => sum + n, 0);
    expect(total).toBeLessThanOrEqual(3 + 6 * spanned + 5);
    await expectWellFormed(index, new Set(Array.from({ length: 2000 }, (_, n) => key(2 * n))));
  });

  it('pages a range with a cursor, stops at a scope’s end, and takes what it reads when asked', async () => {
    const index = partition();
    const keys = [
      ...Array.from({ length: 500 }, (_, n) => `a:${n}`),
      ...Array.from({ length: 300 }, (_, n) => `b:${n}`),
      ...Array.from({ length: 200 }, (_, n) => `c:${n}`),
    ];
    await index.add(keys);
    const scope = sorted(keys.filter((k) => k.startsWith('b:')));
    const paged: string[] = [];
    for (let after: string | null = null; ;) {
      const page = await index.range(after === null ? '[b:' : `(${after}`, '(b:\xff', 37);
      paged.push(...page);
      if (page.length < 37) break;
      after = page[page.length - 1];
    }
    expect(paged).toEqual(scope);
    expect(await index.range('[b:', '(b:\xff', 1000)).toEqual(scope);
    // a max that falls on a bound: exclusive stops before it, inclusive takes it (the next chunk's first key)
    const bound = (await index.chunks())[3].bound!;
    const below = sorted(keys).filter((k) => before(k, bound));
    expect(await index.range('-', `(${bound}`, 2000)).toEqual(below);
    expect(await index.range('-', `[${bound}`, 2000)).toEqual([...below, bound]);
    expect(await index.range('[zz', '+', 10)).toEqual([]);

    // taken: the scope leaves the index in two calls, the rest stays well formed
    expect(await index.range('[b:', '(b:\xff', 250, true)).toEqual(scope.slice(0, 250));
    expect(await index.range('[b:', '(b:\xff', 250, true)).toEqual(scope.slice(250));
    expect(await index.range('[b:', '(b:\xff', 1)).toEqual([]);
    await expectWellFormed(index, new Set(keys.filter((k) => !k.startsWith('b:'))));
  });

  it('answers existence for present and absent keys in any chunk', async () => {
    const index = partition();
    const keys = Array.from({ length: 400 }, (_, n) => `e:${n}`);
    await index.add(keys);
    expect(await index.has(['e:0', 'e:399', 'e:200', 'nope', '0', 'e:4000', 'e:1'])).toEqual([
      1, 1, 1, 0, 0, 0, 1,
    ]);
    expect(await index.has(['a'])).toEqual([0]);
  });

  it('takes a key longer than 64 bytes: only its chunk is a skiplist', async () => {
    const index = partition();
    const long = `long:${'x'.repeat(80)}`;
    const keys = [...Array.from({ length: 200 }, (_, n) => `j:${n}`), long];
    await index.add(keys);
    const chunks = await index.chunks();
    expect(chunks.map((chunk) => chunk.encoding).filter((encoding) => encoding !== 'listpack')).toEqual([
      'skiplist',
    ]);
    expect(await index.range('-', '+', 1000)).toEqual(sorted(keys));
    expect(await index.has([long])).toEqual([1]);
    expect(await index.remove([long])).toBe(1);
    expect(await index.range('[long:', '+', 10)).toEqual([]);
  });
});
