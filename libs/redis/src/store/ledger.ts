import type { LedgerEntry, LedgerEventName } from '@sundial/core';

/** A ledger entry as includes/ledger.lua stores it: short names keep the list small. */
interface StoredEntry {
  a: number;
  e: LedgerEventName;
  v: number;
  w?: string;
  r?: string;
  m?: string;
  c?: number;
  n?: number;
  d?: number;
  /** `ended`: why a failed run ended its timer (absent in entries written before it was recorded) */
  x?: string;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** The one TS reader of a stored entry (docs/design.md "Ledger"). */
export function decodeLedgerEntry(text: string): LedgerEntry {
  const stored = JSON.parse(text) as StoredEntry;
  const entry: LedgerEntry = { at: iso(stored.a), event: stored.e, version: stored.v };
  if (stored.w) entry.workerId = stored.w;
  if (stored.r) entry.reason = stored.r;
  if (stored.m !== undefined) entry.message = stored.m;
  if (stored.c !== undefined) entry.count = stored.c;
  if (stored.n !== undefined) entry.attempt = stored.n;
  if (stored.d !== undefined) entry.due = iso(stored.d);
  if (stored.x) entry.ended = stored.x;
  return entry;
}

/** A timer's first entry while nothing else happened to it: implied by its row (`sa`), never stored. */
export function impliedFirstEntry(scheduledAt: number): LedgerEntry {
  return { at: iso(scheduledAt), event: 'scheduled', version: 1 };
}

/**
 * The `armed` entry a handed-off row implies while it waits in `armed` (includes/ledger.lua
 * ledger_fold_armed), as the kept line it would become, or null: its score is the hand-off ms, unless
 * written already (a `.5` score, the entry in `kept`, or a row naming its job: a release before kept it);
 * `fields` are the row's `s`, `v`, `d`, `tg`, `j` (`d` null: no row).
 */
export function impliedArmedLine(
  score: string | null,
  kept: string | null,
  [status, version, due, trigger, job]: (string | null)[],
): string | null {
  if (score === null || score.includes('.') || due === null || job !== null) return null;
  if ((status ?? 'pending') !== 'pending') return null;
  const line = `{"a":${score},"e":"armed","v":${version ?? '1'},"d":${trigger ?? due}}`;
  return kept?.includes(`{"a":${score},"e":"armed"`) ? null : line;
}
