import { type LedgerEntry, refusals, validateKey } from '@sundial/core';
import type { RedisClient } from '../infra/connection';
import type { SundialKeys } from '../store/keys';
import { decodeLedgerEntry, impliedFirstEntry } from '../store/ledger';

/** `history`: one pipelined read of the key's ledger, row and tombstone (same slot, one round trip). */
export class LedgerReads {
  /**
   * While a repartition this client joined runs (docs/design.md "Repartition"): the layout the timers
   * are moving from, where a key not moved yet keeps its ledger (`h:`, or `mh:` while it moves).
   */
  previous: SundialKeys | null = null;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SundialKeys,
  ) {}

  /**
   * Newest first, at most `limit`. The row's kept entries (`lq`: its hand-off and claim, written to the
   * list with its next entry) come first; a row with no ledger key has had nothing else happen to it but
   * its creation: that entry is implied by the row (includes/ledger.lua). `not-found` when there is no
   * ledger, row or tombstone.
   */
  async history(key: string, limit: number): Promise<LedgerEntry[]> {
    validateKey(key);
    const replies = await this.redis
      .pipeline()
      .lrange(this.keys.ledger(key), 0, limit - 1)
      .hmget(this.keys.row(key), 'sa', 'lq')
      .exists(this.keys.tombstone(key))
      .exec();
    const [stored, [scheduledAt, kept], tombstones] = (replies ?? []).map(([error, value]) => {
      if (error) throw error;
      return value;
    }) as [string[], [string | null, string | null], number];
    const newest = kept === null ? [] : kept.split('\n').reverse().map(decodeLedgerEntry);
    if (stored.length > 0) return [...newest, ...stored.map(decodeLedgerEntry)].slice(0, limit);
    if (scheduledAt !== null) {
      if (this.keys.ledgerSize === 0) return [];
      // A first hand-off keeps the 'scheduled' entry with its own (includes/ledger.lua ledger_hand_off).
      const first = newest.some((entry) => entry.event === 'scheduled')
        ? []
        : [impliedFirstEntry(Number(scheduledAt))];
      return [...newest, ...first].slice(0, limit);
    }
    const moving = await this.previousLedger(key, limit);
    if (moving.length > 0) return moving.map(decodeLedgerEntry);
    if (tombstones > 0) return [];
    throw refusals.notFound(key);
  }

  /** The key's ledger in the layout a repartition moves from, where it may still be (or moving). */
  private async previousLedger(key: string, limit: number): Promise<string[]> {
    const { previous } = this;
    if (!previous) return [];
    const base = previous.base(previous.partitionOf(key));
    for (const name of [previous.ledger(key), `${base}mh:${key}`]) {
      const stored = await this.redis.lrange(name, 0, limit - 1);
      if (stored.length > 0) return stored;
    }
    return [];
  }
}
