import { type DuePosition } from './due-order';
import { SundialError } from './errors';
import { fnv1a32 } from './fnv1a32';
import { refusals } from './refusals';
import type { TimerStatus } from './types';

/** The listing a cursor goes on with: its prefix and filters (`list()` options without limit and cursor). */
export interface ListScope {
  prefix: string;
  status?: TimerStatus;
  dueBefore?: number;
}

/** A listing and the cursor it was given. */
export type CursorQuery = ListScope & { cursor?: string };

/**
 * The opaque cursors of `list()`, the same on both backends (docs/spec.md §3.6): base64url JSON of the
 * position — `{ after: the last key gone past }` in key order, `[due, key]` of the last timer in due
 * order — and `of`, a short fingerprint of the listing's prefix and filters. A cursor reused with
 * another prefix or filter is refused rather than read as a position of this listing: before, it
 * answered from that position (a cursor past every key of the new prefix gave an empty page, silently).
 * A cursor without `of` (the previous release's) still goes on from its position, as that release did.
 */
export function encodeKeyCursor(after: string, scope: ListScope): string {
  return encode({ after, of: fingerprint(scope) });
}

/** The key a cursor names, null for none; refused when it is not one list() returned for this listing. */
export function decodeKeyCursor(query: CursorQuery): string | null {
  const decoded = decode(query.cursor);
  if (decoded === undefined) return null;
  if (isKeyCursor(decoded)) return ofThisList(decoded.of, query) && decoded.after;
  // a due-order cursor of this release (it names its list): one list() returned, for a dueBefore list
  if (Array.isArray(decoded) && decoded.length === 3) throw otherListCursor();
  throw badCursor();
}

export function encodeDueCursor(position: DuePosition, scope: ListScope): string {
  return encode([position.due, position.key, fingerprint(scope)]);
}

/** The due and key a cursor names, null for none; refused as decodeKeyCursor refuses. */
export function decodeDueCursor(query: CursorQuery): DuePosition | null {
  const decoded = decode(query.cursor);
  if (decoded === undefined) return null;
  if (Array.isArray(decoded) && (decoded.length === 2 || decoded.length === 3)) {
    const [due, key, of] = decoded as unknown[];
    if (typeof due === 'number' && typeof key === 'string' && ofThisList(of, query)) return { due, key };
  }
  // a key-order cursor that names its list: one list() returned, for a list without dueBefore
  if (isKeyCursor(decoded) && decoded.of !== undefined) throw otherListCursor();
  throw badCursor();
}

/**
 * A cursor list() did not return, or an earlier release's of the other order (docs/spec.md §3.6): both backends.
 * A cursor of the Redis releases that listed partition by partition (`[partition, key]`) is one: its
 * position cannot be told in key order across partitions, so going on from it would repeat or lose keys.
 */
function badCursor(): Error {
  return refusals.invalid(
    'cursor',
    'The cursor is not one list() returned.',
    'Pass the nextCursor of the previous page, or omit it to start over.',
  );
}

/** Whether a cursor's `of` names this listing: true, or undefined for the previous release's; else refused. */
function ofThisList(of: unknown, scope: ListScope): true {
  if (of === undefined || of === fingerprint(scope)) return true;
  throw typeof of === 'string' ? otherListCursor() : badCursor();
}

/**
 * A cursor list() returned for another listing: another prefix, status or dueBefore, or the other order
 * (with or without dueBefore), which over HTTP was told it was no page's nextCursor.
 */
function otherListCursor(): SundialError {
  return new SundialError({
    reason: 'invalid',
    field: 'cursor',
    message: 'The cursor belongs to a list of another prefix or filter (prefix, status, dueBefore).',
    fix: 'Pass the cursor with the prefix, status and dueBefore of the list that returned it, or omit it to start over.',
    detail: { code: 'cursor-other-list' },
  });
}

/** 6 or 7 base-36 characters: enough to tell a changed prefix or filter, short in a URL. */
function fingerprint({ prefix, status, dueBefore }: ListScope): string {
  // In due order the status can only be pending (or not given, the same listing).
  const filters = dueBefore === undefined ? [prefix, status ?? null] : [prefix, dueBefore];
  return fnv1a32(JSON.stringify(filters)).toString(36);
}

function encode(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** The cursor's JSON; undefined for no cursor, refused when it is not base64url JSON. */
function decode(cursor: string | undefined): unknown {
  if (cursor === undefined || cursor === '') return undefined;
  try {
    return JSON.parse(Buffer.from(cursor, 'base64url').toString()) as unknown;
  } catch {
    throw badCursor();
  }
}

function isKeyCursor(value: unknown): value is { after: string; of?: unknown } {
  return (
    typeof value === 'object' && value !== null && typeof (value as { after?: unknown }).after === 'string'
  );
}
