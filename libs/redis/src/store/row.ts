import type {
  ArmedState,
  Delivery,
  OverlapPolicy,
  RetryPolicy,
  JsonObject,
  JsonValue,
  LastRun,
  NormalizedSpec,
  SlotPolicy,
  SlotTimer,
  Timer,
  TimerKind,
  TimerStatus,
} from '@sundial/core';

/**
 * A row as short field name → string value (docs/design.md, "Row hash fields"). The hash in Redis has
 * no `key` field (its name holds the key): script replies add it, readers of the raw hash add it.
 */
export type RowFields = Record<string, string>;

/**
 * What a row leaves out (docs/design.md "Row values", includes/row.lua ROW_DEFAULTS): `v` 1, `s`
 * pending, `k` once. Readers of the raw hash go through `decodeRow` / `slotTimerOf` / `statusOf`,
 * which put them back.
 */
const ROW_DEFAULTS: Readonly<RowFields> = { v: '1', s: 'pending', k: 'once' };

/** The status a row's raw `s` stands for (absent: pending). */
export function statusOf(s: string | null | undefined): TimerStatus {
  return (s ?? ROW_DEFAULTS.s) as TimerStatus;
}

/** HGETALL-style `[field, value, field, value, ...]` from index `from` → record (what Lua scripts reply with). */
export function fieldsFromFlat(flat: readonly string[], from = 0): RowFields {
  const fields: RowFields = {};
  for (let i = from; i + 1 < flat.length; i += 2) fields[flat[i]] = flat[i + 1];
  return fields;
}

/**
 * The row fields a spec defines, ready for HSET. Defaults are left out (absent = default) so a pending
 * row stays small: `k` absent = once, `aw` absent = true, `rm` absent = true, `dl` absent =
 * at-least-once, `p` absent = null.
 */
export function encodeSpecFields(spec: NormalizedSpec): RowFields {
  const fields: RowFields = {}; // empty, then set: the rows of a batch outlive a scavenge (normalizeSpec)
  fields.h = spec.handler;
  if (spec.kind !== ROW_DEFAULTS.k) fields.k = spec.kind;
  if (spec.payload !== null) fields.p = JSON.stringify(spec.payload);
  if (spec.delayMs !== undefined) fields.dm = String(spec.delayMs);
  if (spec.everyMs !== undefined) fields.em = String(spec.everyMs);
  if (spec.cron !== undefined) fields.cr = spec.cron;
  if (spec.tz !== undefined) fields.tz = spec.tz;
  if (spec.maxRuns !== undefined) fields.mr = String(spec.maxRuns);
  if (!spec.awaitTask) fields.aw = '0';
  if (!spec.removeOnComplete) fields.rm = '0';
  if (spec.delivery === 'at-most-once') fields.dl = 'm';
  if (spec.meta !== undefined) fields.m = JSON.stringify(spec.meta);
  // written into `fields`, not merged from objects of their own: this runs per spec of a scheduleMany
  encodeRunPolicies(spec, fields);
  encodeSlotPolicy(spec, fields);
  return fields;
}

/**
 * The run policies (docs/design.md "Row hash fields"): `ov` b | c for overlap 'buffer-one' | 'cancel-other'
 * ('allow' is `aw` 0, 'skip' nothing), `ry` "attempts,f|e,delayMs[,maxDelayMs]", `pf` pauseAfterFailures,
 * `to` timeout (ms): set on `fields`.
 */
function encodeRunPolicies(spec: NormalizedSpec, fields: RowFields): void {
  if (spec.overlap === 'buffer-one' || spec.overlap === 'cancel-other') fields.ov = spec.overlap[0];
  if (spec.retry) {
    const { attempts, backoff } = spec.retry;
    const parts = [
      attempts,
      backoff.type[0],
      backoff.delay,
      ...(backoff.maxDelay === undefined ? [] : [backoff.maxDelay]),
    ];
    fields.ry = parts.join(',');
  }
  if (spec.pauseAfterFailures !== undefined) fields.pf = String(spec.pauseAfterFailures);
  if (spec.timeout !== undefined) fields.to = String(spec.timeout);
}

/**
 * The run policies of a row of `kind`, as `Timer` returns them (absent: the defaults), set on `timer`:
 * written into it, not merged from an object of their own (createdTimer runs per spec of a scheduleMany).
 */
function setRunPolicies(
  timer: Pick<Timer, 'overlap' | 'retry' | 'pauseAfterFailures' | 'timeout'>,
  fields: RowFields,
  kind: string,
): void {
  const overlap = OVERLAP_CODES[fields.ov ?? ''] ?? (fields.aw === '0' ? 'allow' : undefined);
  if (overlap && kind !== 'once') timer.overlap = overlap;
  if (fields.ry !== undefined) {
    const [attempts, type, delay, maxDelay] = fields.ry.split(',');
    const backoff: RetryPolicy['backoff'] = {
      type: type === 'e' ? 'exponential' : 'fixed',
      delay: Number(delay),
    };
    if (maxDelay !== undefined) backoff.maxDelay = Number(maxDelay);
    timer.retry = { attempts: Number(attempts), backoff };
  }
  if (fields.pf !== undefined) timer.pauseAfterFailures = Number(fields.pf);
  if (fields.to !== undefined) timer.timeout = Number(fields.to);
}

const OVERLAP_CODES: Record<string, OverlapPolicy> = { b: 'buffer-one', c: 'cancel-other' };

/** Slot policy fields (docs/design.md): `cu` s|a (absent: once), `cw`, `jt` (ms), `st`, `ea` (epoch ms), set on `fields`. */
function encodeSlotPolicy(policy: SlotPolicy, fields: RowFields): void {
  if (policy.catchup !== undefined) fields.cu = policy.catchup === 'skip' ? 's' : 'a';
  if (policy.catchupWindow !== undefined) fields.cw = String(policy.catchupWindow);
  if (policy.jitter !== undefined) fields.jt = String(policy.jitter);
  if (policy.startAt !== undefined) fields.st = String(policy.startAt);
  if (policy.endAt !== undefined) fields.ea = String(policy.endAt);
}

/** The slot policies a row stores, as a Timer shows them, set on `policy`. */
function setSlotPolicy(policy: SlotPolicy, fields: RowFields): void {
  if (fields.cu !== undefined) policy.catchup = fields.cu === 's' ? 'skip' : 'all';
  if (fields.cw !== undefined) policy.catchupWindow = Number(fields.cw);
  if (fields.jt !== undefined) policy.jitter = Number(fields.jt);
  if (fields.st !== undefined) policy.startAt = Number(fields.st);
  if (fields.ea !== undefined) policy.endAt = Number(fields.ea);
}

/** The one decoder from a row (or a tombstone's fields) to the public `Timer`. */
export function decodeRow(fields: RowFields): Timer {
  // The defaults are read where they apply, not merged into a copy of the row: every write's reply is decoded.
  const kind = (fields.k ?? ROW_DEFAULTS.k) as TimerKind;
  const timer: Timer = {
    id: fields.id,
    key: fields.key,
    version: Number(fields.v ?? ROW_DEFAULTS.v),
    kind,
    status: statusOf(fields.s),
    handler: fields.h,
    payload: fields.p === undefined ? null : (JSON.parse(fields.p) as JsonValue),
    scheduledAt: Number(fields.sa),
    dueAt: Number(fields.d),
    runCount: fields.rc === undefined ? 0 : Number(fields.rc),
    awaitTask: fields.aw !== '0',
    removeOnComplete: fields.rm !== '0',
    delivery: (fields.dl === 'm' ? 'at-most-once' : 'at-least-once') satisfies Delivery,
    lastFiredAt: optionalNumber(fields.lf),
    lastCompletedAt: optionalNumber(fields.lc),
    lastErrorAt: optionalNumber(fields.le),
    last: fields.l === undefined ? null : (JSON.parse(fields.l) as LastRun),
  };
  if (fields.dm !== undefined) timer.delayMs = Number(fields.dm);
  if (fields.em !== undefined) timer.everyMs = Number(fields.em);
  if (fields.cr !== undefined) timer.cron = fields.cr;
  if (fields.tz !== undefined) timer.tz = fields.tz;
  if (fields.mr !== undefined) timer.maxRuns = Number(fields.mr);
  if (fields.m !== undefined) timer.meta = JSON.parse(fields.m) as JsonObject;
  setRunPolicies(timer, fields, kind);
  setSlotPolicy(timer, fields);
  return timer;
}

/**
 * The Timer of a row schedule.lua has just created: the spec and its `encodeSpecFields` give every field
 * but the three Redis chose (`id`, `sa`, `d`), which are all the script replies. Equal to `decodeRow` of
 * the stored row, without building and decoding that row. Its payload and meta are the spec's own
 * (normalizeSpec made them JSON copies of what the caller passed: no one else holds them).
 */
export function createdTimer(spec: NormalizedSpec, fields: RowFields, created: RowFields): Timer {
  // an empty literal set field by field: like normalizeSpec's, these objects outlive a scavenge
  const timer = {} as Timer;
  timer.id = created.id;
  timer.key = spec.key;
  timer.version = 1;
  timer.kind = spec.kind;
  timer.status = 'pending';
  timer.handler = spec.handler;
  timer.payload = spec.payload;
  timer.scheduledAt = Number(created.sa);
  timer.dueAt = Number(created.d);
  timer.runCount = 0;
  timer.awaitTask = spec.awaitTask;
  timer.removeOnComplete = spec.removeOnComplete;
  timer.delivery = spec.delivery;
  timer.lastFiredAt = null;
  timer.lastCompletedAt = null;
  timer.lastErrorAt = null;
  timer.last = null;
  if (spec.delayMs !== undefined) timer.delayMs = spec.delayMs;
  if (spec.everyMs !== undefined) timer.everyMs = spec.everyMs;
  if (spec.cron !== undefined) timer.cron = spec.cron;
  if (spec.tz !== undefined) timer.tz = spec.tz;
  if (spec.maxRuns !== undefined) timer.maxRuns = spec.maxRuns;
  if (spec.meta !== undefined) timer.meta = spec.meta;
  setRunPolicies(timer, fields, spec.kind);
  setSlotPolicy(timer, fields);
  return timer;
}

/**
 * What a row's armed due is beyond its Timer (core's ArmedState, for `next`): `tg` a trigger run not
 * claimed yet, `at` the try of a pending retry (absent: 1), `mv` / `cf` a due run however late, `bf` /
 * `bs` a backfill in progress (going back to a moved run when `mv`, to a retry when `bt`).
 */
export function armedStateOf(fields: RowFields): ArmedState {
  const armed: ArmedState = { retry: fields.at !== undefined && Number(fields.at) > 1 };
  if (fields.tg !== undefined) armed.trigger = Number(fields.tg);
  // a run reschedule moved (`mv`) or the slot overlap 'buffer-one' kept (`cf`) runs however late
  if (fields.mv !== undefined || fields.cf !== undefined) armed.asked = true;
  if (fields.bf !== undefined && fields.bs !== undefined) {
    const resume = Number(fields.bs);
    const moved = fields.mv !== undefined || fields.bt !== undefined;
    armed.backfill = { rest: JSON.parse(fields.bf) as number[], resume, moved };
  }
  return armed;
}

/** What core's slot rules (slot-policy.ts) read of a row. */
export function slotTimerOf(fields: RowFields): SlotTimer {
  const timer: SlotTimer = {
    key: fields.key,
    kind: (fields.k ?? ROW_DEFAULTS.k) as TimerKind,
    scheduledAt: Number(fields.sa),
  };
  setSlotPolicy(timer, fields);
  if (fields.em !== undefined) timer.everyMs = Number(fields.em);
  if (fields.cr !== undefined) timer.cron = fields.cr;
  if (fields.tz !== undefined) timer.tz = fields.tz;
  return timer;
}

function optionalNumber(value: string | undefined): number | null {
  return value === undefined ? null : Number(value);
}
