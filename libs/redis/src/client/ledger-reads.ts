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

  /** `settle`: settles the key's row when a cancelAll's scope record covers it (cancel-all.lua 'settle'). */
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SundialKeys,
    private readonly settle: (key: string) => Promise<unknown>,
  ) {}

  /**
   * Newest first, at most `limit`. The row's kept entries (`lq`: its hand-off and claim, written to the
   * list with its next entry) come first; a row with no ledger key has had nothing else happen to it but
   * its creation: that entry is implied by the row (includes/ledger.lua). A key a cancel-all buried with
   * no list write has its entries derived from its tombstone and the call's record
   * (includes/cancel-record.lua). The key's closed ledger (the lives that ended removed on completion,
   * includes/ledger.lua ledger_close_append) comes last. `not-found` when there is no ledger, row or
   * tombstone. While a repartition runs, a key not moved yet answers the same from the layout it moves
   * from: where it lies (row, tombstone, ledger), or between the steps of its move (`m:`, `mx:`, `mh:`).
   */
  async history(key: string, limit: number): Promise<LedgerEntry[]> {
    validateKey(key);
    const { previous } = this;
    const places = [placeOf(this.keys, key)];
    if (previous) places.push(placeOf(previous, key), movingPlaceOf(previous, key));
    for (const place of places) {
      const entries = await this.historyIn(place, key, limit);
      if (entries) return entries;
    }
    throw refusals.noHistory(key);
  }

  /** The key's history in one place, or null when it holds no ledger, row or tombstone of the key. */
  private async historyIn(place: LedgerPlace, key: string, limit: number): Promise<LedgerEntry[] | null> {
    const { keys } = place;
    const replies = await this.redis
      .pipeline()
      .lrange(place.ledger, 0, limit - 1)
      .get(place.closed)
      .hmget(place.row, 'sa', 'lq', 's', 'v', 'd', 'tg', 'j')
      .hmget(place.tombstone, 'id', 'v', 'sa', 'lq')
      .pexpiretime(place.tombstone)
      .zscore(keys.armed(keys.partitionOf(key)), key)
      .sismember(`${keys.base(keys.partitionOf(key))}scm`, key)
      .exec();
    const [
      stored,
      closed,
      [scheduledAt, rowKept, ...fields],
      [buriedId, buriedVersion, buriedAt, buriedKept],
      expiresAt,
      handedOff,
      covered,
    ] = (replies ?? []).map(([error, value]) => {
      if (error) throw error;
      return value;
    }) as [string[], string | null, (string | null)[], (string | null)[], number, string | null, number];
    // a row a cancelAll's scope record covers is cancelled: settled first, its cancel is in its history
    if (covered === 1 && keys === this.keys) {
      await this.settle(key);
      return this.historyIn(place, key, limit);
    }
    // a row handed off and not claimed implies its `armed` entry, the newest (includes/ledger.lua)
    const armed = impliedArmedLine(handedOff, rowKept, fields);
    const kept = armed === null ? rowKept : rowKept === null ? armed : `${rowKept}\n${armed}`;
    // the closed ledger holds the key's earlier lives, older than everything else: together with the
    // list at most `ledgerSize` entries, as one list trimmed to that size would hold
    const room = Math.max(0, keys.ledgerSize - stored.length);
    const earlier = newestFirst(closed).slice(0, room).map(decodeLedgerEntry);
    // no more than the ledger holds: the row's kept entries are the list's newest, which its next write
    // trims to `ledgerSize` (a ledger turned off still shows what it kept)
    const most = Math.min(limit, keys.ledgerSize || limit);
    // a row leaves version 1 out (docs/design.md "Row values"): a tombstone is known by its id
    if (buriedId !== null) {
      const version = Number(buriedVersion ?? '1') + 1;
      const cancel = await this.recordedCancel(keys, key, version, expiresAt, stored[0]);
      if (cancel) return [cancel, ...withKept(buriedKept, buriedAt, stored), ...earlier].slice(0, most);
    }
    if (stored.length > 0 || earlier.length > 0 || (scheduledAt !== null && keys.ledgerSize > 0)) {
      return [...withKept(kept, scheduledAt, stored), ...earlier].slice(0, most);
    }
    return scheduledAt !== null || buriedId !== null ? [] : null;
  }

  /**
   * The `cancelled` entry (of `version`) a cancel-all left in its call's record instead of the ledger,
   * found by the tombstone's expiry; none when the key has a list: a cancel-all writes the cancel into a
   * list that exists, and none is made while the tombstone lasts (a row whose run goes on, whose stale
   * end will follow the cancel there, writes its list: cancel-all.lua) — so a list's newest entry may be
   * newer than the cancel.
   */
  private async recordedCancel(
    keys: SundialKeys,
    key: string,
    version: number,
    expiresAt: number,
    newest: string | undefined,
  ): Promise<LedgerEntry | undefined> {
    if (keys.ledgerSize === 0 || expiresAt < 0 || newest !== undefined) return undefined;
    const record = await this.redis.get(keys.cancelRecord(key, expiresAt));
    if (record === null) return undefined;
    const { a, r } = JSON.parse(record) as { a: number; r: string };
    return decodeLedgerEntry(JSON.stringify({ a, e: 'cancelled', v: version, r }));
  }
}

/** Where a key's ledger, closed ledger, row and tombstone lie in one layout (`keys`). */
interface LedgerPlace {
  keys: SundialKeys;
  ledger: string;
  closed: string;
  row: string;
  tombstone: string;
}

function placeOf(keys: SundialKeys, key: string): LedgerPlace {
  const [ledger, closed] = [keys.ledger(key), keys.closedLedger(key)];
  return { keys, ledger, closed, row: keys.row(key), tombstone: keys.tombstone(key) };
}

/**
 * A key between the steps of its move out of `keys`' layout (repartition-take.lua): its row, tombstone
 * and ledger renamed `m:`, `mx:`, `mh:` (the closed ledger folded into the latter), out of `armed`.
 */
function movingPlaceOf(keys: SundialKeys, key: string): LedgerPlace {
  const base = keys.base(keys.partitionOf(key));
  const [ledger, closed] = [`${base}mh:${key}`, keys.closedLedger(key)];
  return { keys, ledger, closed, row: `${base}m:${key}`, tombstone: `${base}mx:${key}` };
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
