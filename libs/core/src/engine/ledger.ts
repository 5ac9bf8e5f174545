import type { LedgerEntry } from '../ledger';
import { ledgerEntryOf } from '../ledger';
import type { TimerEvent } from '../types';
import type { Entry } from './entry';

/** How long the ledger of a removed timer stays readable (as includes/ledger.lua LEDGER_KEEP_MS): 7 days. */
const LEDGER_KEEP_MS = 7 * 86_400_000;

interface Book {
  /** newest first */
  entries: LedgerEntry[];
  /** when the book goes (its timer was cancelled or removed), or null while the timer lives */
  expiresAt: number | null;
}

/**
 * The engine's ledger (docs/spec.md §3.9): per key, the last `size` entries, newest first, the same
 * entries the Redis scripts write (core ledger.ts `ledgerEntryOf`). A cancelled key's book lasts as
 * long as its tombstone; a removed one's `keepMs`; a key scheduled again goes on in the same book.
 */
export class Ledger {
  private readonly books = new Map<string, Book>();
  /** books with an expiry, in the order they were given one */
  private readonly expiring = new Set<string>();

  constructor(
    private readonly size: number,
    private readonly tombstoneMs: number,
    private readonly now: () => number,
  ) {}

  /**
   * An event's entry (without its `due` unless `due`). A stale wake or run of a key with no book opens
   * none (its timer is gone).
   */
  record(event: TimerEvent, due = true): void {
    const entry = ledgerEntryOf(event);
    if (!entry || this.size === 0) return;
    if (!due) delete entry.due;
    if (entry.event === 'stale' && !this.book(event.key)) return;
    this.append(event.key, entry);
    if (entry.event === 'scheduled') this.expire(event.key, null);
  }

  append(key: string, entry: LedgerEntry): void {
    if (this.size === 0) return;
    this.purge();
    const book = this.book(key) ?? { entries: [], expiresAt: null };
    this.books.set(key, book);
    book.entries.unshift(entry);
    if (book.entries.length > this.size) book.entries.length = this.size;
  }

  /** A retry just armed (`at` now): its try and when it is due — no event says it. */
  retried(
    at: number,
    { key, version, attempt, dueAt }: Pick<Entry, 'key' | 'version' | 'attempt' | 'dueAt'>,
  ): void {
    const [when, due] = [at, dueAt].map((ms) => new Date(ms).toISOString());
    this.append(key, { at: when, event: 'retried', version, attempt, due });
  }

  /** The timer of `key` was cancelled: its book lasts as long as the tombstone. */
  bury(key: string): void {
    this.expire(key, this.tombstoneMs);
  }

  /** The timer of `key` ended and was removed (or a kept finished one dropped). */
  drop(key: string): void {
    this.expire(key, LEDGER_KEEP_MS);
  }

  /** The book of `key` lasts `ms` more (null: as long as its timer). */
  private expire(key: string, ms: number | null): void {
    const book = this.book(key);
    if (!book) return;
    this.expiring.delete(key);
    book.expiresAt = ms === null ? null : this.now() + ms;
    if (ms !== null) this.expiring.add(key);
  }

  /** Newest first, at most `limit`; undefined when the key has no book. */
  entries(key: string, limit: number): LedgerEntry[] | undefined {
    return this.book(key)
      ?.entries.slice(0, limit)
      .map((entry) => ({ ...entry }));
  }

  private book(key: string): Book | undefined {
    const book = this.books.get(key);
    if (book?.expiresAt != null && book.expiresAt <= this.now()) {
      this.books.delete(key);
      this.expiring.delete(key);
      return undefined;
    }
    return book;
  }

  /** Drops expired books from the front of `expiring` (their expiries come nearly in order). */
  private purge(): void {
    for (const key of this.expiring) {
      if (this.book(key)) return;
    }
  }
}
