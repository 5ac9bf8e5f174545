import {
  checkDueBefore,
  compareDue,
  decodeDueCursor,
  type DuePosition,
  encodeDueCursor,
  type ListOptions,
  refusals,
  type ListResult,
  type Timer,
  type TimerStatus,
  validateKey,
  validateScope,
} from '@sundial/core';
import type { RedisClient } from '../infra/connection';
import type { SundialKeys } from '../store/keys';
import { idBit, idsOfBitmap } from '../store/live-ids';
import { decodeRow, statusOf } from '../store/row';

const DEFAULT_LIST_LIMIT = 100;
const MAX_LIST_LIMIT = 1000;
/** How many `due` entries one partition reads per `dueBefore` page with a prefix, and per command. */
const DUE_SCAN_BUDGET = 10_000;
const DUE_SCAN_CHUNK = 1000;
/** How many keys a `list` with a status reads per call, and per command. */
const STATUS_SCAN_BUDGET = 10_000;
const STATUS_SCAN_CHUNK = 1000;
const STATUSES: readonly TimerStatus[] = ['pending', 'running', 'paused', 'completed', 'failed', 'cancelled'];

/**
 * The reads of the Timers API: straight from the row hashes and indexes, no script. During a
 * repartition this client joined (docs/design.md "Repartition"), `previous` is the layout the timers are
 * leaving: a read looks in the new partition first, then in the old one.
 */
export class TimerReads {
  previous: SundialKeys | null = null;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SundialKeys,
  ) {}

  async get(key: string): Promise<Timer | null> {
    validateKey(key);
    const { previous } = this;
    const names = [this.keys.row(key)];
    // Not moved yet, or being moved: its row, or the moving record repartition-take made of it.
    if (previous) names.push(previous.row(key), `${previous.base(previous.partitionOf(key))}m:${key}`);
    for (const name of names) {
      const fields = await this.redis.hgetall(name);
      if (fields.id !== undefined) return decodeRow({ ...fields, key });
    }
    return null;
  }

  /**
   * Walks the lex index partition by partition (keys sorted within a partition). The cursor is opaque:
   * base64url of `[partition, last key read]` (null: the partition's start).
   */
  async list(options: ListOptions = {}): Promise<ListResult> {
    const { status } = options;
    const prefix = validateScope(options.prefix);
    if (status !== undefined && !STATUSES.includes(status)) {
      throw refusals.invalid(
        'status',
        `Unknown status ${JSON.stringify(status)}.`,
        `Use one of ${STATUSES.join(', ')}.`,
      );
    }
    const limit = listLimit(options.limit);
    const dueBefore = checkDueBefore(options);
    if (dueBefore !== undefined) return this.listByDue(prefix, dueBefore, limit, options.cursor);
    let [partition, after] = decodeCursor(options.cursor);
    const items: Timer[] = [];
    const max = prefix ? `(${prefix}\xff` : '+';
    // With a status, keys are read a chunk at a time and only their status field first; at most
    // STATUS_SCAN_BUDGET keys a call, then the page ends (short, even empty) with a cursor to go on.
    const chunk = status === undefined ? limit : STATUS_SCAN_CHUNK;
    let scanned = 0;
    const walk = this.walk();
    while (partition < walk.length) {
      if (scanned >= STATUS_SCAN_BUDGET) return { items, nextCursor: encodeCursor(partition, after) };
      const [layout, n] = walk[partition];
      const rowOf = (key: string) => `${layout.base(n)}t:${key}`;
      const min = after !== null ? `(${after}` : prefix ? `[${prefix}` : '-';
      const keys = await this.redis.zrangebylex(layout.keys(n), min, max, 'LIMIT', 0, chunk);
      scanned += keys.length;
      const matching = status === undefined ? keys : await this.keysWithStatus(keys, rowOf, status);
      const taken = matching.slice(0, limit - items.length);
      for (const timer of await this.readRows(taken, rowOf)) {
        if (timer && (status === undefined || timer.status === status)) items.push(timer);
      }
      if (items.length === limit)
        return { items, nextCursor: encodeCursor(partition, taken[taken.length - 1]) };
      // A taken key whose row went since the index was read (fired, cancelled) left the page short: go on
      // after the last key taken, not after the chunk's last, or the keys read but not taken are skipped.
      if (taken.length < matching.length) {
        after = taken[taken.length - 1];
        continue;
      }
      [partition, after] = keys.length < chunk ? [partition + 1, null] : [partition, keys[keys.length - 1]];
    }
    return { items, nextCursor: null };
  }

  /** The keys whose row has `status` (field `s`; `id` tells a row from none), one pipelined HMGET each. */
  private async keysWithStatus(
    keys: string[],
    rowOf: (key: string) => string,
    status: TimerStatus,
  ): Promise<string[]> {
    if (keys.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const key of keys) pipeline.hmget(rowOf(key), 's', 'id');
    const results = (await pipeline.exec()) ?? [];
    return keys.filter((_, i) => {
      const [error, value] = results[i];
      if (error) throw error;
      const [s, id] = value as (string | null)[];
      return id !== null && statusOf(s) === status;
    });
  }

  /**
   * Pending timers due by `dueBefore`, in due order: each partition's `due` zset (score = effective due)
   * read from the cursor on, the partitions' first `limit` merged. A timer already handed to BullMQ
   * (`armed`, within the dispatcher's lead of its due) is firing, no longer upcoming. A prefix is
   * filtered while reading, so each partition reads at most DUE_SCAN_BUDGET entries per call: when one
   * stops there, the page ends where it stopped (possibly short, even empty) and the cursor goes on
   * from there — every page costs the same whatever the prefix matches. During a repartition it reads
   * this client's layout only: timers not moved yet show once they are.
   */
  private async listByDue(
    prefix: string,
    dueBefore: number,
    limit: number,
    cursor: string | undefined,
  ): Promise<ListResult> {
    const after = decodeDueCursor(cursor);
    const scans = await Promise.all(
      this.keys.all().map((partition) => this.dueAfter(partition, prefix, dueBefore, limit, after)),
    );
    // No page may go past a partition's stopping point: that partition may hold earlier entries beyond it.
    const stops = scans.flatMap(({ stoppedAt }) => (stoppedAt ? [stoppedAt] : []));
    const horizon = stops.length ? stops.sort(compareDue)[0] : null;
    const merged = scans
      .flatMap(({ found }) => found)
      .filter((position) => !horizon || compareDue(position, horizon) <= 0)
      .sort(compareDue);
    const page = merged.slice(0, limit);
    const rows = await this.readRows(
      page.map(({ key }) => key),
      (key) => this.keys.row(key),
    );
    const last = merged.length > limit ? page[page.length - 1] : horizon;
    return {
      items: rows.filter((timer): timer is Timer => timer?.status === 'pending'),
      nextCursor: last ? encodeDueCursor(last) : null,
    };
  }

  /**
   * Up to `limit + 1` positions of one partition's `due` zset after `after`, due by `dueBefore`, with
   * the prefix; `stoppedAt` is the last position read when the budget ran out before that was found.
   */
  private async dueAfter(
    partition: number,
    prefix: string,
    dueBefore: number,
    limit: number,
    after: DuePosition | null,
  ): Promise<{ found: DuePosition[]; stoppedAt: DuePosition | null }> {
    const found: DuePosition[] = [];
    const chunk = prefix ? DUE_SCAN_CHUNK : limit + 1;
    // Entries read past the cursor; ties on the cursor's due are read again and skipped, uncounted, so
    // a page always moves on.
    let read = 0;
    for (let offset = 0; ; offset += chunk) {
      const flat = await this.redis.zrangebyscore(
        this.keys.due(partition),
        after ? after.due : '-inf',
        dueBefore,
        'WITHSCORES',
        'LIMIT',
        offset,
        chunk,
      );
      let position: DuePosition | null = null;
      for (let i = 0; i < flat.length && found.length <= limit; i += 2) {
        position = { key: flat[i], due: Number(flat[i + 1]) };
        if (after && compareDue(position, after) <= 0) continue;
        read++;
        if (position.key.startsWith(prefix)) found.push(position);
      }
      if (found.length > limit || flat.length < 2 * chunk) return { found, stoppedAt: null };
      if (read >= DUE_SCAN_BUDGET) return { found, stoppedAt: position };
    }
  }

  /**
   * An id names the partition it was created in (`<seq>p<N>`), looked in first; a repartition may have
   * moved its timer since, so a miss looks in every other partition. One GETBIT each (store/live-ids.ts).
   */
  async check(id: string): Promise<boolean> {
    const bit = typeof id === 'string' ? idBit(id) : null;
    if (!bit) return false;
    const isSet = ([layout, n]: [SundialKeys, number]) =>
      this.redis.getbit(layout.idBitmap(n, bit.chunk), bit.offset);
    const named = this.keys.partitionOfId(id);
    if (named !== null && (await isSet([this.keys, named])) === 1) return true;
    const others = this.walk().filter(([layout, n]) => layout !== this.keys || n !== named);
    return (await Promise.all(others.map(isSet))).includes(1);
  }

  async snapshot(): Promise<string[]> {
    const perPartition = await Promise.all(
      this.walk().map(async ([layout, n]) => {
        const chunks = await this.redis.smembers(layout.idChunks(n));
        const bitmaps = await Promise.all(
          chunks.map((chunk) => this.redis.getBuffer(layout.idBitmap(n, chunk))),
        );
        return chunks.flatMap((chunk, i) => {
          const bitmap = bitmaps[i];
          return bitmap ? idsOfBitmap(chunk, bitmap) : [];
        });
      }),
    );
    return [...new Set(perPartition.flat())];
  }

  /** The partitions reads walk: ours, then (during a repartition) the old ones that are not also ours. */
  private walk(): [SundialKeys, number][] {
    const ours = this.keys.all().map((n): [SundialKeys, number] => [this.keys, n]);
    const { previous } = this;
    if (!previous) return ours;
    const bases = new Set(this.keys.all().map((n) => this.keys.base(n)));
    const old = previous.all().filter((n) => !bases.has(previous.base(n)));
    return [...ours, ...old.map((n): [SundialKeys, number] => [previous, n])];
  }

  private async readRows(keys: string[], rowOf: (key: string) => string): Promise<(Timer | null)[]> {
    if (keys.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const key of keys) pipeline.hgetall(rowOf(key));
    const results = (await pipeline.exec()) ?? [];
    return results.map(([error, fields], i) => {
      if (error) throw error;
      const row = fields as Record<string, string>;
      return row.id === undefined ? null : decodeRow({ ...row, key: keys[i] });
    });
  }
}

function listLimit(limit: number | undefined): number {
  if (limit === undefined) return DEFAULT_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw refusals.invalid(
      'limit',
      `limit must be an integer from 1 to ${MAX_LIST_LIMIT}, got ${typeof limit === 'string' ? JSON.stringify(limit) : String(limit)}.`,
      `Pass e.g. limit: ${DEFAULT_LIST_LIMIT}.`,
    );
  }
  return limit;
}

/** `after` null: from the start of `partition`. */
function encodeCursor(partition: number, after: string | null): string {
  return Buffer.from(JSON.stringify([partition, after])).toString('base64url');
}

function decodeCursor(cursor: string | undefined): [number, string | null] {
  if (cursor === undefined || cursor === '') return [0, null];
  try {
    const [partition, after] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as unknown[];
    if (Number.isInteger(partition) && (typeof after === 'string' || after === null)) {
      return [partition as number, after as string | null];
    }
  } catch {
    // fall through to the refusal
  }
  throw refusals.invalid(
    'cursor',
    'The cursor is not one list() returned.',
    'Pass the nextCursor of the previous page, or omit it to start over.',
  );
}
