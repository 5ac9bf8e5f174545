import { fieldsFromFlat, type RowFields } from './row';

/** The first element of a store script's reply (schedule, reschedule, pause, resume, trigger). */
export type RowReplyCode = 'ok' | 'kept' | 'not-found' | 'inactive' | 'duplicate' | 'retry';

export interface RowReply {
  code: RowReplyCode;
  /** the row's fields; for 'duplicate' `key`; for 'retry' Redis now as `now` */
  fields: RowFields;
}

/** `[code, field, value, ...]` → code + fields; 'retry' carries Redis now as `now`. */
export function parseRowReply(raw: string[]): RowReply {
  const [code, ...rest] = raw as [RowReplyCode, ...string[]];
  return { code, fields: code === 'retry' ? { now: rest[0] } : fieldsFromFlat(rest) };
}

/** complete.lua's reply per run. */
export type CompleteReply = 'done' | 'stale';

/** claim.lua's first element per timer: claimed (held or free), or why not. */
export type ClaimCode = 'held' | 'free' | 'early' | 'stale' | 'lost';
