import type { RedisClient } from '../infra/connection';
import type { SundialKeys } from '../store/keys';
import { runScript } from '../store/script-loader';

/** Keys per take/drop call: one call holds Redis for about a millisecond. */
const MOVE_BATCH = 500;

type TakeReply = ['busy'] | ['none'] | ['move', string[], string[], number, string[], number];
/**
 * What repartition-put.lua takes per key: key, row fields, tombstone fields, tombstone ms left, ledger
 * entries (newest first), ledger ms left.
 */
type PutItem = [string, Record<string, string>, Record<string, string>, number, string[], number];

/**
 * Moves keys from one layout to another (docs/design.md "Repartition"): per key, the three steps
 * take (old partition: out of sight, unless busy), put (new partition: in, once per id) and drop (old
 * partition: the moving records go), each atomic in its own slot and safe to repeat, so a Redis Cluster
 * never needs one script over two partitions and any mover may finish what another began. The
 * repartition moves every key; a client of the new count moves the keys it is about to write first.
 */
export class KeyMover {
  constructor(
    private readonly redis: RedisClient,
    readonly from: SundialKeys,
    readonly to: SundialKeys,
  ) {}

  /** Whether the key lives under another partition base in the new layout (else it stays put). */
  moves(key: string): boolean {
    return this.fromBase(key) !== this.toBase(key);
  }

  fromBase(key: string): string {
    return this.from.base(this.from.partitionOf(key));
  }

  toBase(key: string): string {
    return this.to.base(this.to.partitionOf(key));
  }

  /** Moves what the keys have in the old layout; resolves those left behind because a run is in progress. */
  async move(keys: string[]): Promise<{ moved: number; busy: string[] }> {
    const byBase = groupBy(
      keys.filter((key) => this.moves(key)),
      (key) => this.fromBase(key),
    );
    const results = await Promise.all(
      [...byBase].flatMap(([base, group]) => slices(group).map((slice) => this.moveSlice(base, slice))),
    );
    return {
      moved: results.reduce((sum, result) => sum + result.moved, 0),
      busy: results.flatMap((result) => result.busy),
    };
  }

  /** Keys of one old partition: take, put (per new partition), drop. */
  private async moveSlice(base: string, keys: string[]): Promise<{ moved: number; busy: string[] }> {
    const replies = (await runScript(
      this.redis,
      'repartition-take',
      base,
      this.from.ledgerSize,
      this.from.prefix,
      ...keys,
    )) as TakeReply[];
    const busy: string[] = [];
    const taken: PutItem[] = [];
    replies.forEach((reply, i) => {
      if (reply[0] === 'busy') busy.push(keys[i]);
      if (reply[0] === 'move') {
        const [, row, tombstone, tombstoneMs, ledger, ledgerMs] = reply;
        taken.push([keys[i], record(row), record(tombstone), Number(tombstoneMs), ledger, Number(ledgerMs)]);
      }
    });
    if (taken.length === 0) return { moved: 0, busy };
    const byTarget = groupBy(taken, ([key]) => this.toBase(key));
    await Promise.all(
      [...byTarget].map(([target, items]) =>
        runScript(
          this.redis,
          'repartition-put',
          target,
          this.to.ledgerSize,
          this.to.prefix,
          JSON.stringify(items),
        ),
      ),
    );
    const movedKeys = taken.map(([key]) => key);
    await runScript(
      this.redis,
      'repartition-drop',
      base,
      this.from.ledgerSize,
      this.from.prefix,
      ...movedKeys,
    );
    return { moved: taken.length, busy };
  }
}

/** HGETALL-style array → object. */
function record(flat: string[]): Record<string, string> {
  const fields: Record<string, string> = {};
  for (let i = 0; i < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
  return fields;
}

function groupBy<T>(items: T[], keyOf: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

function slices<T>(items: T[]): T[][] {
  return Array.from({ length: Math.ceil(items.length / MOVE_BATCH) }, (_, n) =>
    items.slice(n * MOVE_BATCH, (n + 1) * MOVE_BATCH),
  );
}
