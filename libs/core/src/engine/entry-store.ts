import { compareDue } from '../due-order';
import { decodeDueCursor, decodeKeyCursor, encodeDueCursor, encodeKeyCursor } from '../list-cursor';
import type { ListQuery } from '../list-query';
import { validateKey } from '../names';
import { type InactiveOperation, refusals } from '../refusals';
import type { ListResult, Timer } from '../types';
import { statusOf, toTimer, type Entry } from './entry';

interface Tombstone {
  readonly timer: Timer;
  readonly expiresAt: number;
}

/**
 * The entries by key (live ones, and finished ones kept by `removeOnComplete: false`), the live ids,
 * and the tombstones of cancelled keys (docs/spec.md §3.1) that let
 * `ifExists: 'keep'` return a cancelled timer until the tombstone expires.
 */
export class EntryStore {
  private readonly byKey = new Map<string, Entry>();
  /** id → key of every live entry, in creation order */
  private readonly keyById = new Map<string, string>();
  /** in burial order, which is expiry order since every tombstone lives the same time */
  private readonly tombstones = new Map<string, Tombstone>();

  constructor(private readonly tombstoneMs: number) {}

  get(key: string): Entry | undefined {
    return this.byKey.get(key);
  }

  /**
   * The live entry under `key` that `operation` acts on, or `not-found` — naming, for a kept one that
   * ended, the status it ended with (docs/spec.md §2).
   */
  live(key: string, operation: InactiveOperation | 'resume'): Entry {
    const entry = this.byKey.get(validateKey(key));
    if (!entry) throw refusals.notFound(key);
    if (entry.outcome) throw refusals.ended(key, entry.outcome, operation);
    return entry;
  }

  hasId(id: string): boolean {
    return this.keyById.has(id);
  }

  ids(): string[] {
    return [...this.keyById.keys()];
  }

  entries(): Entry[] {
    return [...this.byKey.values()];
  }

  /** Adds a new entry; a new timer under a cancelled key replaces its tombstone. */
  add(entry: Entry): void {
    this.byKey.set(entry.key, entry);
    this.keyById.set(entry.id, entry.key);
    this.tombstones.delete(entry.key);
  }

  /** The entry is no longer live: `check` and `snapshot` forget its id, `get` and `list` still show it. */
  retire(entry: Entry): void {
    this.keyById.delete(entry.id);
  }

  remove(entry: Entry): void {
    if (this.byKey.get(entry.key) !== entry) return;
    this.byKey.delete(entry.key);
    this.keyById.delete(entry.id);
  }

  bury(timer: Timer, now: number): void {
    this.purgeTombstones(now);
    this.tombstones.delete(timer.key);
    this.tombstones.set(timer.key, { timer, expiresAt: now + this.tombstoneMs });
  }

  /** The cancelled timer recorded under `key`, while its tombstone lasts. */
  tombstone(key: string, now: number): Timer | undefined {
    this.purgeTombstones(now);
    const timer = this.tombstones.get(key)?.timer;
    return timer && structuredClone(timer);
  }

  /** Live timers in key order, a page at a time; the cursor names the last key of the previous page. */
  list(query: ListQuery): ListResult {
    if (query.dueBefore !== undefined) return this.listByDue(query, query.dueBefore);
    const { prefix, status, limit } = query;
    const after = decodeKeyCursor(query);
    const matching = [...this.byKey.values()]
      .filter((entry) => entry.key.startsWith(prefix) && (after === null || entry.key > after))
      .filter((entry) => status === undefined || statusOf(entry) === status)
      .sort((a, b) => (a.key < b.key ? -1 : 1));
    const page = matching.slice(0, limit);
    return {
      items: page.map((entry) => toTimer(entry)),
      nextCursor: matching.length > limit ? encodeKeyCursor(page[page.length - 1].key, query) : null,
    };
  }

  /** Pending timers due by `dueBefore`, in due order; the cursor is the due and key of the last one. */
  private listByDue(query: ListQuery, dueBefore: number): ListResult {
    const { prefix, limit } = query;
    const after = decodeDueCursor(query);
    const position = (entry: Entry) => ({ due: entry.dueAt, key: entry.key });
    const matching = [...this.byKey.values()]
      .filter((entry) => entry.key.startsWith(prefix) && statusOf(entry) === 'pending')
      .filter((entry) => entry.dueAt <= dueBefore && (!after || compareDue(position(entry), after) > 0))
      .sort((a, b) => compareDue(position(a), position(b)));
    const page = matching.slice(0, limit);
    return {
      items: page.map((entry) => toTimer(entry)),
      nextCursor: matching.length > limit ? encodeDueCursor(position(page[page.length - 1]), query) : null,
    };
  }

  private purgeTombstones(now: number): void {
    for (const [key, tombstone] of this.tombstones) {
      if (tombstone.expiresAt > now) return;
      this.tombstones.delete(key);
    }
  }
}
