import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { useStore } from './store-fixture';

const store = useStore();

/** The include under test, run as is by EVAL with a body after it (KEYS[1] = the partition base). */
const KEY_INDEX = readFileSync(
  join(__dirname, '../../libs/redis/src/store/commands/includes/key-index.lua'),
  'utf8',
);

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
    range: async (min: string, max: string, limit: number) =>
      (await run(
        'return key_index_range(KEYS[1], ARGV[1], ARGV[2], tonumber(ARGV[3]))',
        min,
        max,
        String(limit),
      )) as string[],
    /** Each chunk: its bound, encoding and keys, in bound order. */
    chunks: async () => {
      const bounds = await store.raw.zrange(`${base}kx`, 0, '-1');
      return Promise.all(
        bounds.map(async (bound) => ({
          bound,
          encoding: await store.raw.object('ENCODING', `${base}kc:${bound}`),
          keys: await store.raw.zrange(`${base}kc:${bound}`, 0, '-1'),
        })),
      );
    },
  };
}

/** Byte order, as Redis's lex ranges. */
const sorted = (keys: Iterable<string>) =>
  [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

/** Every chunk a listpack under 128 keys, covering [its bound, the next bound), none empty. */
async function expectWellFormed(index: ReturnType<typeof partition>, expected: Set<string>) {
  const chunks = await index.chunks();
  for (const [i, chunk] of chunks.entries()) {
    expect(chunk.keys.length).toBeGreaterThan(0);
    expect(chunk.keys.length).toBeLessThan(128);
    expect(chunk.encoding).toBe('listpack');
    expect(sorted([chunk.bound, chunk.keys[0]])[0]).toBe(chunk.bound);
    const next = chunks[i + 1]?.bound;
    if (next !== undefined) expect(sorted([chunk.keys[chunk.keys.length - 1], next])[0]).not.toBe(next);
  }
  expect(chunks.flatMap((chunk) => chunk.keys)).toEqual(sorted(expected));
  expect(await index.range('-', '+', expected.size + 1)).toEqual(sorted(expected));
}

describe('key index (includes/key-index.lua)', () => {
  it('splits a chunk before it reaches 128 keys, so every chunk stays a listpack', async () => {
    const index = partition();
    const keys = Array.from({ length: 127 }, (_, n) => `k:${String(n).padStart(3, '0')}`);
    expect(await index.add(keys)).toBe(127);
    expect((await index.chunks()).map((chunk) => [chunk.bound, chunk.keys.length, chunk.encoding])).toEqual([
      ['', 127, 'listpack'],
    ]);
    expect(await index.add(['k:127'])).toBe(1);
    const chunks = await index.chunks();
    expect(chunks.map((chunk) => chunk.keys.length)).toEqual([64, 64]);
    expect(chunks[1].bound).toBe('k:064');
    await expectWellFormed(index, new Set([...keys, 'k:127']));
    // adding what is there changes nothing
    expect(await index.add(['k:000', 'k:127'])).toBe(0);
    expect(await index.chunks()).toEqual(chunks);
  });

  it('keeps byte order across chunks through random adds and removes in batches, merging and deleting chunks', async () => {
    const index = partition();
    const model = new Set<string>();
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    // mixed case and punctuation: byte order, whatever the server's locale collates
    const key = () => `${'aB.:-_/@z'[Math.floor(random() * 9)]}${Math.floor(random() * 5000)}`;
    for (let round = 0; round < 40; round++) {
      const adds = Array.from({ length: 1 + Math.floor(random() * 300) }, key);
      const fresh = new Set(adds.filter((k) => !model.has(k)));
      expect(await index.add(adds)).toBe(fresh.size);
      for (const k of adds) model.add(k);
      const present = [...model];
      const removes = Array.from({ length: Math.floor(random() * 250) }, () =>
        random() < 0.9 ? present[Math.floor(random() * present.length)] : key(),
      );
      const gone = new Set(removes.filter((k) => model.has(k)));
      expect(await index.remove(removes)).toBe(gone.size);
      for (const k of removes) model.delete(k);
    }
    expect(model.size).toBeGreaterThan(1000);
    await expectWellFormed(index, model);

    // removals merge small chunks into the one before: a tenth of the keys left in a third of the chunks or fewer
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

  it('pages a range with a cursor and stops at a scope’s end', async () => {
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
    // a max that falls on a bound: exclusive stops before that chunk, inclusive takes its first key
    const bound = (await index.chunks())[3].bound;
    const before = sorted(keys).filter((k) => sorted([k, bound])[1] === bound && k !== bound);
    expect(await index.range('-', `(${bound}`, 2000)).toEqual(before);
    expect(await index.range('-', `[${bound}`, 2000)).toEqual([...before, bound]);
    expect(await index.range('[zz', '+', 10)).toEqual([]);
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
