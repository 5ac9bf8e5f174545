import { type LedgerEntry, refusals, validateKey } from '@sundial/core';
import type { RedisClient } from '../infra/connection';
import type { SundialKeys } from '../store/keys';
import { decodeLedgerEntry, impliedFirstEntry } from '../store/ledger';

/** `history`: one pipelined read of the key's ledger, row and tombstone (same slot, one round trip). */
export class LedgerReads {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SundialKeys,
  ) {}

  /**
   * Newest first, at most `limit`. A row with no ledger key has had nothing happen to it but its
   * creation: that entry is implied by the row (includes/ledger.lua). `not-found` when there is no
   * ledger, row or tombstone.
   */
  async history(key: string, limit: number): Promise<LedgerEntry[]> {
    validateKey(key);
    const replies = await this.redis
      .pipeline()
      .lrange(this.keys.ledger(key), 0, limit - 1)
      .hget(this.keys.row(key), 'sa')
      .exists(this.keys.tombstone(key))
      .exec();
    const [stored, scheduledAt, tombstones] = (replies ?? []).map(([error, value]) => {
      if (error) throw error;
      return value;
    }) as [string[], string | null, number];
    if (stored.length > 0) return stored.map(decodeLedgerEntry);
    if (scheduledAt !== null) return this.keys.ledgerSize > 0 ? [impliedFirstEntry(Number(scheduledAt))] : [];
    if (tombstones > 0) return [];
    throw refusals.notFound(key);
  }
}
