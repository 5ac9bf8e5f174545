import { type LedgerEntry, refusals, validateKey } from '@sundial/core';
import type { RedisClient } from '../infra/connection';
import type { SundialKeys } from '../store/keys';
import { decodeLedgerEntry, impliedArmedLine, impliedFirstEntry } from '../store/ledger';

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
   * its creation: that entry is implied by the row (includes/ledger.lua). A key a cancel-all buried with
   * no list write has its entries derived from its tombstone and the call's record
   * (includes/cancel-record.lua). The key's closed ledger (the lives that ended removed on completion,
   * includes/ledger.lua ledger_close_append) comes last. `not-found` when there is no ledger, row or
   * tombstone.
   */
  async history(key: string, limit: number): Promise<LedgerEntry[]> {
    validateKey(key);
    const tombstone = this.keys.tombstone(key);
    const replies = await this.redis
      .pipeline()
      .lrange(this.keys.ledger(key), 0, limit - 1)
      .get(this.keys.closedLedger(key))
      .hmget(this.keys.row(key), 'sa', 'lq', 's', 'v', 'd', 'tg', 'j')
      .hmget(tombstone, 'id', 'v', 'sa', 'lq')
      .pexpiretime(tombstone)
      .zscore(this.keys.armed(this.keys.partitionOf(key)), key)
      .exec();
    const [
      stored,
      closed,
      [scheduledAt, rowKept, ...fields],
      [buriedId, buriedVersion, buriedAt, buriedKept],
      expiresAt,
      handedOff,
    ] = (replies ?? []).map(([error, value]) => {
      if (error) throw error;
      return value;
    }) as [string[], string | null, (string | null)[], (string | null)[], number, string | null];
    // a row handed off and not claimed implies its `armed` entry, the newest (includes/ledger.lua)
    const armed = impliedArmedLine(handedOff, rowKept, fields);
    const kept = armed === null ? rowKept : rowKept === null ? armed : `${rowKept}\n${armed}`;
    // the closed ledger holds the key's earlier lives, older than everything else: together with the
    // list at most `ledgerSize` entries, as one list trimmed to that size would hold
    const room = Math.max(0, this.keys.ledgerSize - stored.length);
    const earlier = newestFirst(closed).slice(0, room).map(decodeLedgerEntry);
    // no more than the ledger holds: the row's kept entries are the list's newest, which its next write
    // trims to `ledgerSize` (a ledger turned off still shows what it kept)
    const most = Math.min(limit, this.keys.ledgerSize || limit);
    // a row leaves version 1 out (docs/design.md "Row values"): a tombstone is known by its id
    if (buriedId !== null) {
      const cancel = await this.recordedCancel(key, Number(buriedVersion ?? '1') + 1, expiresAt, stored[0]);
      if (cancel) return [cancel, ...withKept(buriedKept, buriedAt, stored), ...earlier].slice(0, most);
    }
    if (stored.length > 0 || earlier.length > 0 || (scheduledAt !== null && this.keys.ledgerSize > 0)) {
      return [...withKept(kept, scheduledAt, stored), ...earlier].slice(0, most);
    }
    if (scheduledAt !== null) return [];
    const moving = await this.previousLedger(key, limit);
    if (moving.length > 0) return moving.map(decodeLedgerEntry);
    if (buriedId !== null) return [];
    throw refusals.noHistory(key);
  }

  /**
   * The `cancelled` entry (of `version`) a cancel-all left in its call's record instead of the ledger,
   * found by the tombstone's expiry; none when the key has a list: a cancel-all writes the cancel into a
   * list that exists, and none is made while the tombstone lasts (a row whose run goes on, whose stale
   * end will follow the cancel there, writes its list: cancel-all.lua) — so a list's newest entry may be
   * newer than the cancel.
   */
  private async recordedCancel(
    key: string,
    version: number,
    expiresAt: number,
    newest: string | undefined,
  ): Promise<LedgerEntry | undefined> {
    if (this.keys.ledgerSize === 0 || expiresAt < 0 || newest !== undefined) return undefined;
    const record = await this.redis.get(this.keys.cancelRecord(key, expiresAt));
    if (record === null) return undefined;
    const { a, r } = JSON.parse(record) as { a: number; r: string };
    return decodeLedgerEntry(JSON.stringify({ a, e: 'cancelled', v: version, r }));
  }

  /** The key's ledger in the layout a repartition moves from, where it may still be (or moving). */
  private async previousLedger(key: string, limit: number): Promise<string[]> {
    const { previous } = this;
    if (!previous) return [];
    const base = previous.base(previous.partitionOf(key));
    const [stored, closed] = await Promise.all([
      this.redis.lrange(previous.ledger(key), 0, limit - 1),
      this.redis.get(previous.closedLedger(key)),
    ]);
    if (stored.length > 0 || closed !== null) return [...stored, ...newestFirst(closed)].slice(0, limit);
    // a moving ledger holds its closed ledger's entries too (repartition-take.lua)
    return await this.redis.lrange(`${base}mh:${key}`, 0, limit - 1);
  }
}

/**
 * A row's (or a tombstone's) ledger, newest first: its kept entries (`lq`), then the list — or, while
 * the list holds nothing, its first entry implied by `sa` (a first hand-off keeps that with its own:
 * includes/ledger.lua ledger_hand_off).
 */
function withKept(kept: string | null, scheduledAt: string | null, stored: string[]): LedgerEntry[] {
  const newest = newestFirst(kept).map(decodeLedgerEntry);
  const implied =
    stored.length === 0 && scheduledAt !== null && !newest.some((entry) => entry.event === 'scheduled')
      ? [impliedFirstEntry(Number(scheduledAt))]
      : [];
  return [...newest, ...implied, ...stored.map(decodeLedgerEntry)];
}

/** Entries kept as text, oldest first, one per line (a row's `lq`, a closed ledger): newest first. */
function newestFirst(text: string | null): string[] {
  return text === null ? [] : text.split('\n').reverse();
}
