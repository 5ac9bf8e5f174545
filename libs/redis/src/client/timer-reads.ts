import {
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
import { decodeRow } from '../store/row';

const DEFAULT_LIST_LIMIT = 100;
const MAX_LIST_LIMIT = 1000;
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
   * base64url of `[partition, last key returned]`.
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
    let [partition, after] = decodeCursor(options.cursor);
    const items: Timer[] = [];
    const max = prefix ? `(${prefix}\xff` : '+';
    const walk = this.walk();
    while (partition < walk.length) {
      const [layout, n] = walk[partition];
      const min = after !== null ? `(${after}` : prefix ? `[${prefix}` : '-';
      const keys = await this.redis.zrangebylex(layout.keys(n), min, max, 'LIMIT', 0, limit);
      const rows = await this.readRows(layout, n, keys);
      for (let i = 0; i < keys.length; i++) {
        after = keys[i];
        const timer = rows[i];
        if (timer && (status === undefined || timer.status === status)) items.push(timer);
        if (items.length === limit) return { items, nextCursor: encodeCursor(partition, after) };
      }
      if (keys.length < limit) [partition, after] = [partition + 1, null];
    }
    return { items, nextCursor: null };
  }

  /**
   * An id names the partition it was created in (`<seq>p<N>`), looked in first; a repartition may have
   * moved its timer since, so a miss looks in every other partition.
   */
  async check(id: string): Promise<boolean> {
    if (typeof id !== 'string' || !/^\d+p\d+$/.test(id)) return false;
    const named = this.keys.partitionOfId(id);
    if (named !== null && (await this.redis.hexists(this.keys.ids(named), id)) === 1) return true;
    const others = this.walk().filter(([layout, n]) => layout !== this.keys || n !== named);
    const found = await Promise.all(others.map(([layout, n]) => this.redis.hexists(layout.ids(n), id)));
    return found.includes(1);
  }

  async snapshot(): Promise<string[]> {
    const perPartition = await Promise.all(this.walk().map(([layout, n]) => this.redis.hkeys(layout.ids(n))));
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

  private async readRows(layout: SundialKeys, partition: number, keys: string[]): Promise<(Timer | null)[]> {
    if (keys.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const key of keys) pipeline.hgetall(`${layout.base(partition)}t:${key}`);
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
      `limit must be an integer from 1 to ${MAX_LIST_LIMIT}, got ${limit}.`,
      `Pass e.g. limit: ${DEFAULT_LIST_LIMIT}.`,
    );
  }
  return limit;
}

function encodeCursor(partition: number, after: string): string {
  return Buffer.from(JSON.stringify([partition, after])).toString('base64url');
}

function decodeCursor(cursor: string | undefined): [number, string | null] {
  if (cursor === undefined || cursor === '') return [0, null];
  try {
    const [partition, after] = JSON.parse(Buffer.from(cursor, 'base64url').toString()) as unknown[];
    if (Number.isInteger(partition) && typeof after === 'string') return [partition as number, after];
  } catch {
    // fall through to the refusal
  }
  throw refusals.invalid(
    'cursor',
    'The cursor is not one list() returned.',
    'Pass the nextCursor of the previous page, or omit it to start over.',
  );
}
