import {
  type ArmedState,
  compareDue,
  decodeDueCursor,
  type DuePosition,
  encodeDueCursor,
  type ListOptions,
  type ListQuery,
  type ListResult,
  type Timer,
  toListQuery,
  validateIdArgument,
  validateKey,
} from '@sundial/core';
import type { RedisClient } from '../infra/connection';
import type { SundialKeys } from '../store/keys';
import { idBit, idsOfBitmap } from '../store/live-ids';
import { armedStateOf, decodeRow, type RowFields } from '../store/row';
import { listInKeyOrder } from './key-order-list';
import { type PartitionRef, readRows } from './partition-rows';

/** How many `due` entries one partition reads per `dueBefore` page with a prefix, and per command. */
const DUE_SCAN_BUDGET = 10_000;
const DUE_SCAN_CHUNK = 1000;

/**
 * The reads of the Timers API: straight from the row hashes and indexes, no script. During a
 * repartition this client joined (docs/design.md "Repartition"), `previous` is the layout the timers are
 * leaving: a read looks in the new partition first, then in the old one.
 */
export class TimerReads {
  previous: SundialKeys | null = null;

  /** `sweep`: settles what a partition's cancelAll scope record covers (the live ids of its rows go too). */
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SundialKeys,
    private readonly sweep: (partition: number) => Promise<unknown>,
  ) {}

  async get(key: string): Promise<Timer | null> {
    const fields = await this.rowFields(key);
    return fields && decodeRow(fields);
  }

  /** The row under `key` and what its armed due is beyond the Timer (`next`'s ArmedState), or null. */
  async armedRow(key: string): Promise<{ timer: Timer; armed: ArmedState } | null> {
    const fields = await this.rowFields(key);
    return fields && { timer: decodeRow(fields), armed: armedStateOf(fields) };
  }

  /** The fields of the row under `key` (its `key` added), wherever a repartition left it, or null. */
  private async rowFields(key: string): Promise<RowFields | null> {
    validateKey(key);
    const { previous } = this;
    const names = [this.keys.row(key)];
    // Not moved yet, or being moved: its row, or the moving record repartition-take made of it.
    if (previous) names.push(previous.row(key), `${previous.base(previous.partitionOf(key))}m:${key}`);
    // A row a cancelAll's scope record covers is cancelled, not yet settled (includes/scope-records.lua).
    const [first, covered] = await Promise.all([
      this.redis.hgetall(names[0]),
      this.redis.sismember(`${this.keys.base(this.keys.partitionOf(key))}scm`, key),
    ]);
    if (first.id !== undefined) return covered === 0 ? { ...first, key } : null;
    for (const name of names.slice(1)) {
      const fields = await this.redis.hgetall(name);
      if (fields.id !== undefined) return { ...fields, key };
    }
    return null;
  }

  /** In key order across the partitions (key-order-list.ts); with `dueBefore`, in due order. Options: core's toListQuery. */
  async list(options: ListOptions = {}): Promise<ListResult> {
    const query = toListQuery(options);
    if (query.dueBefore !== undefined) return this.listByDue(query, query.dueBefore);
    return listInKeyOrder(this.redis, this.walk(), query);
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
  private async listByDue(query: ListQuery, dueBefore: number): Promise<ListResult> {
    const { prefix, limit } = query;
    const after = decodeDueCursor(query);
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
    const rows = await readRows(
      this.redis,
      page.map(({ key }) => ({ key, at: [this.keys, this.keys.partitionOf(key)] })),
    );
    const last = merged.length > limit ? page[page.length - 1] : horizon;
    return {
      items: rows.filter((timer): timer is Timer => timer?.status === 'pending'),
      nextCursor: last ? encodeDueCursor(last, query) : null,
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
    const bit = idBit(validateIdArgument(id));
    if (!bit) return false;
    const isSet = ([layout, n]: PartitionRef) => this.redis.getbit(layout.idBitmap(n, bit.chunk), bit.offset);
    const named = this.keys.partitionOfId(id);
    if (named !== null && (await this.unswept([this.keys, named], () => isSet([this.keys, named]))) === 1)
      return true;
    const others = this.walk().filter(([layout, n]) => layout !== this.keys || n !== named);
    return (await Promise.all(others.map(isSet))).includes(1);
  }

  async snapshot(): Promise<string[]> {
    const perPartition = await Promise.all(
      this.walk().map(async ([layout, n]) => {
        const chunks = await this.unswept([layout, n], () => this.redis.smembers(layout.idChunks(n)));
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

  /**
   * `read` of a partition's live ids, sent with a look for its cancelAll scope record: the rows a record
   * covers keep their ids until settled, so with one there the read waits for its sweep and reads again.
   */
  private async unswept<T>([layout, n]: PartitionRef, read: () => Promise<T>): Promise<T> {
    const [open, value] = await Promise.all([this.redis.exists(`${layout.base(n)}sc`), read()]);
    if (open === 0 || layout !== this.keys) return value;
    await this.sweep(n);
    return read();
  }

  /** The partitions reads walk: ours, then (during a repartition) the old ones that are not also ours. */
  private walk(): PartitionRef[] {
    const ours = this.keys.all().map((n): PartitionRef => [this.keys, n]);
    const { previous } = this;
    if (!previous) return ours;
    const bases = new Set(this.keys.all().map((n) => this.keys.base(n)));
    const old = previous.all().filter((n) => !bases.has(previous.base(n)));
    return [...ours, ...old.map((n): PartitionRef => [previous, n])];
  }
}
