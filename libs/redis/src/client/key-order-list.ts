import { decodeKeyCursor, encodeKeyCursor, type ListQuery, type ListResult, type Timer } from '@sundial/core';
import type { RedisClient } from '../infra/connection';
import { type IndexedKey, keysWithStatus, type PartitionRef, readRows } from './partition-rows';

/**
 * Index keys after which a `list` call ends its page where it got to (short, even empty) with a cursor
 * to go on — so a page costs the same however few rows a status matches; a call reads less than this
 * plus one round. It also bounds a round: each partition reads its share (10 keys or more with the
 * 1024 partitions at most, still 5 during a repartition that walks 2048).
 */
const SCAN_BUDGET = 10_000;
/** With a status, keys one partition reads per round (only their status field, then the matches' rows). */
const STATUS_CHUNK = 1000;

/**
 * Lists in key order across every partition, as the memory engine does. A round reads each partition's
 * next keys after the cursor's (ZRANGEBYLEX, one command per partition, in parallel — no cross-slot
 * command on a Redis Cluster) and merges them up to the horizon: the least last key of a partition that
 * filled its read, past which that partition may hold keys not read yet. Rounds go on until the page is
 * full, the keys run out or the budget is spent.
 */
export async function listInKeyOrder(
  redis: RedisClient,
  partitions: readonly PartitionRef[],
  query: ListQuery,
): Promise<ListResult> {
  const { prefix, status, limit } = query;
  let after = decodeKeyCursor(query);
  // Unfiltered, limit + 1 keys a partition are enough to fill the page and to tell whether one follows.
  const chunk = Math.min(
    status === undefined ? limit + 1 : STATUS_CHUNK,
    Math.ceil(SCAN_BUDGET / partitions.length),
  );
  const items: Timer[] = [];
  let scanned = 0;
  for (;;) {
    const round = await readRound(redis, partitions, prefix, after, chunk);
    scanned += round.read;
    const matching = status === undefined ? round.keys : await keysWithStatus(redis, round.keys, status);
    const taken = matching.slice(0, limit - items.length);
    for (const timer of await readRows(redis, taken)) {
      if (timer && (status === undefined || timer.status === status)) items.push(timer);
    }
    // Keys read but not taken (the page is full, or a taken key's row went since the index was read —
    // fired, cancelled — and left it short): go on after the last key taken, or they are skipped. Else
    // every key up to the horizon was looked at: go on after it; no horizon, the keys have ended.
    const next = taken.length < matching.length ? taken[taken.length - 1].key : round.horizon;
    if (next === null) return { items, nextCursor: null };
    if (items.length === limit || scanned >= SCAN_BUDGET)
      return { items, nextCursor: encodeKeyCursor(next, query) };
    after = next;
  }
}

/** Every partition's next `chunk` keys after `after` under `prefix`, merged in key order up to the horizon. */
async function readRound(
  redis: RedisClient,
  partitions: readonly PartitionRef[],
  prefix: string,
  after: string | null,
  chunk: number,
): Promise<{ keys: IndexedKey[]; horizon: string | null; read: number }> {
  // A cursor of the previous release (which named no listing) before the prefix starts at the prefix:
  // `(after` alone would read every key between the two, none of them under the prefix.
  const min = after !== null && compareKeys(after, prefix) >= 0 ? `(${after}` : prefix ? `[${prefix}` : '-';
  const max = prefix ? `(${prefix}\xff` : '+';
  const reads = await Promise.all(
    partitions.map(([layout, n]) => redis.zrangebylex(layout.keys(n), min, max, 'LIMIT', 0, chunk)),
  );
  const ends = reads.filter((keys) => keys.length === chunk).map((keys) => keys[keys.length - 1]);
  const horizon = ends.length
    ? ends.reduce((least, key) => (compareKeys(key, least) < 0 ? key : least))
    : null;
  const merged = reads
    .flatMap((keys, i) =>
      keys
        .filter((key) => horizon === null || compareKeys(key, horizon) <= 0)
        .map((key) => ({ key, at: partitions[i] })),
    )
    .sort((a, b) => compareKeys(a.key, b.key));
  // A key in two indexes (during a repartition) is listed once, from the first partition walked: the
  // new layout's (the sort keeps the walk's order among equal keys).
  const keys = merged.filter(({ key }, i) => i === 0 || merged[i - 1].key !== key);
  return { keys, horizon, read: reads.reduce((sum, keys) => sum + keys.length, 0) };
}

/**
 * Redis orders a lex index by bytes. Keys are ASCII (docs/spec.md §2, `names.ts`), where JavaScript's
 * UTF-16 code-unit order is that byte order (`localeCompare` is not).
 */
function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
