import { fieldsFromFlat, type RowFields } from './row';

/** The first element of a store script's reply (schedule, reschedule, pause, resume, trigger). */
export type RowReplyCode =
  'ok' | 'kept' | 'not-found' | 'inactive' | 'duplicate' | 'retry' | 'refused' | 'passed';

export interface RowReply {
  code: RowReplyCode;
  /** the row's fields; for 'duplicate' `key`; for 'retry' Redis now as `now` */
  fields: RowFields;
  /** the first answer of the caller's request given again (store/replayed.ts): its first call did it */
  again?: boolean;
}

/**
 * `[code, field, value, ...]` → code + fields; 'retry' carries Redis now as `now`. The pairs are read in
 * place, not from a rest copy of the reply (one per write). A write that keeps its answer for a repeated
 * call (reschedule, pause, resume, trigger, backfill: includes/requests.lua) replies with that array as
 * the JSON text it keeps, one string instead of a RESP element per field.
 */
export function parseRowReply(raw: string[] | string): RowReply {
  const flat = typeof raw === 'string' ? (JSON.parse(raw) as string[]) : raw;
  const code = flat[0] as RowReplyCode;
  return { code, fields: code === 'retry' ? { now: flat[1] } : fieldsFromFlat(flat, 1) };
}

/**
 * schedule.lua's reply: `['ok', sa, first seq, ...]` with per spec its due (a created row: the ids are
 * consecutive seqs from the first, all scheduled at `sa`; a plain one-shot's due is its `at` as sent, as
 * text, any other a number) or `['kept', ...row pairs]` — none in a call of plain one-shots that only its
 * client repeats (parseScheduleReply's `plainSpecs`); or
 * `['duplicate', key]` / `['retry', now]` / `['refused']` (its batch's first call was not answered 'ok')
 * for a call refused unchanged; `['passed']`: a guard call whose request's first call was answered.
 */
export type RawScheduleReply =
  | ['ok', number, number, ...(number | string | string[])[]]
  | ['duplicate', string]
  | ['retry', number]
  | ['refused']
  | ['passed'];

/**
 * A schedule.lua reply per spec, as the other writes reply: a created row is 'ok' with `id`, `sa`, `d`.
 * `plainSpecs`: the call's specs when it sent plain one-shots only (4 elements each, the `at` text second),
 * whose reply may carry no entry per spec: each was created, its due the `at` it was sent with.
 */
export function parseScheduleReply(
  raw: RawScheduleReply,
  partition: number,
  plainSpecs?: readonly (string | number)[],
): RowReply[] {
  if (raw[0] === 'duplicate') return [{ code: 'duplicate', fields: { key: raw[1] } }];
  if (raw[0] === 'retry') return [{ code: 'retry', fields: { now: String(raw[1]) } }];
  if (raw[0] === 'refused' || raw[0] === 'passed') return [{ code: raw[0], fields: {} }];
  const [, sa, firstSeq] = raw;
  const scheduledAt = String(sa);
  let seq = firstSeq;
  const replies: RowReply[] = [];
  const created = (due: string): RowReply => ({
    code: 'ok',
    fields: { id: `${seq++}p${partition}`, sa: scheduledAt, d: due },
  });
  if (raw.length === 3 && plainSpecs) {
    for (let at = 1; at < plainSpecs.length; at += 4) replies.push(created(String(plainSpecs[at])));
    return replies;
  }
  for (let n = 3; n < raw.length; n++) {
    const entry = raw[n] as number | string | string[];
    replies.push(typeof entry === 'object' ? parseRowReply(entry) : created(String(entry)));
  }
  return replies;
}

/**
 * complete.lua's reply per run: done, with the slots the timer went past (by reason, docs/spec.md §3.3);
 * or stale, and why (then nothing was written).
 */
export type CompleteReply =
  { kind: 'done'; missed: number; overlap: number } | { kind: 'stale'; reason: StaleReason };

/** As complete.lua answers it: `{ 'done', missed, overlap }` or `{ 'stale', reason }`. */
export type RawCompleteReply = ['done', number, number] | ['stale', StaleReason];

export function parseCompleteReply(raw: RawCompleteReply): CompleteReply {
  return raw[0] === 'done'
    ? { kind: 'done', missed: raw[1], overlap: raw[2] }
    : { kind: 'stale', reason: raw[1] };
}

/**
 * Why a claim or completion changed nothing: the timer is gone (or replaced by a new id), changed
 * (`version`), or not in the state the run expects (`status`: not pending, or a reclaimed run); a
 * completion also `overlap`: a free run that overlap 'cancel-other' aborted when the next slot's run
 * started (complete.lua's settle_free; docs/spec.md §3.3a).
 */
export type StaleReason = 'gone' | 'version' | 'status' | 'overlap';

/** claim.lua's first element per timer: claimed (held or free), or why not. */
export type ClaimCode = 'held' | 'free' | 'early' | 'check' | 'stale' | 'lost' | 'passed';
