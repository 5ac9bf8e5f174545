import { refusals } from './refusals';
import { showValue } from './show-value';
import type { NormalizedSpec, Timer, TimerEvent } from './types';

/** What a ledger entry records (docs/spec.md §3.9): one entry per state change of a timer. */
export type LedgerEventName =
  | 'scheduled'
  | 'replaced'
  | 'rescheduled'
  | 'armed'
  | 'claimed'
  | 'completed'
  | 'failed'
  | 'stale'
  | 'skipped'
  | 'lost'
  | 'cancelled'
  | 'paused'
  | 'resumed'
  | 'triggered'
  | 'retried'
  | 'backfilled';

/** One entry of a timer's ledger, as `history` returns it (newest first). */
export interface LedgerEntry {
  /** when it happened: ISO 8601, by Redis's clock (the engine's clock in memory) */
  at: string;
  event: LedgerEventName;
  /** the timer's version after the change; for `stale`, the version the stale job or run named */
  version: number;
  workerId?: string;
  /** why: a `failed` (or `lost`) entry's is its error's; a `completed` one's, why the run ended its timer */
  reason?: string;
  /**
   * `failed` / `lost`: why the run ended its timer unasked (TimerEnd) — `no-next-slot`, `ended` (§3.3c)
   * or `max-runs` — what a `completed` entry says in `reason`; absent when the timer goes on (and in
   * entries written before it)
   */
  ended?: string;
  message?: string;
  count?: number;
  attempt?: number;
  due?: string;
}

/** One coming due time and the UTC offset of the timer's zone at it (`+00:00` without a zone). */
export interface NextTime {
  at: string;
  offset: string;
}

/** Per timer, from its row and ledger (docs/spec.md §3.9). */
export interface TimerCounters {
  runs: number;
  failures: number;
  stale: number;
  skipped: number;
  /** at-most-once runs whose worker was lost, recorded failed (as sundial_runs_lost_total) */
  lost: number;
  /** at-least-once runs whose worker was lost, put back to run again (as sundial_runs_requeued_total) */
  requeued: number;
}

export interface HistoryOptions {
  /** entries wanted, newest first (default 50, at most 200) */
  limit?: number;
}

export interface NextOptions {
  /** due times wanted (default 10, at most 100) */
  count?: number;
}

export type DescribeOptions = HistoryOptions & NextOptions;

/** What `preview` answers for a spec it accepts: nothing is written. */
export interface Preview {
  spec: NormalizedSpec;
  next: NextTime[];
}

/**
 * The Timer fields of a timer's life (its identity and run state), which a spec has none of: the others
 * are what `preview`'s spec says too, and what a timer scheduled again from another's row shares with it.
 */
export const TIMER_LIFE_FIELDS = [
  'id',
  'version',
  'status',
  'scheduledAt',
  'dueAt',
  'runCount',
  'lastFiredAt',
  'lastCompletedAt',
  'lastErrorAt',
  'last',
] as const satisfies readonly (keyof Timer)[];

export interface TimerDescription {
  timer: Timer;
  next: NextTime[];
  history: LedgerEntry[];
  counters: TimerCounters;
}

/** Entries a ledger keeps per key unless configured otherwise; also `history`'s default limit. */
export const DEFAULT_LEDGER_SIZE = 50;
export const MAX_HISTORY_LIMIT = 200;
export const DEFAULT_NEXT_COUNT = 10;
export const MAX_NEXT_COUNT = 100;

/** `history`'s limit, checked. */
export function historyLimit(options: HistoryOptions | undefined): number {
  return boundedCount(options?.limit, 'limit', DEFAULT_LEDGER_SIZE, MAX_HISTORY_LIMIT);
}

/** `next`'s count, checked. */
export function nextCount(options: NextOptions | undefined): number {
  return boundedCount(options?.count, 'count', DEFAULT_NEXT_COUNT, MAX_NEXT_COUNT);
}

/** How many entries a ledger keeps: 0 turns it off (a deployment's option or SUNDIAL_LEDGER). */
export function validateLedgerSize(size: unknown, field = 'ledger'): number {
  if (typeof size === 'number' && Number.isInteger(size) && size >= 0 && size <= 1000) return size;
  throw refusals.invalid(
    field,
    `${field} ${showValue(size)} is not a number of ledger entries`,
    'Use an integer from 0 (no ledger) to 1000; the default keeps 50 entries per timer.',
  );
}

/** SUNDIAL_LEDGER: `off` or a number of entries per timer; unset → the default. */
export function ledgerSizeFromEnv(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return DEFAULT_LEDGER_SIZE;
  if (value.trim().toLowerCase() === 'off') return 0;
  // A text that is not a number is checked as the text, so the refusal shows it (not NaN).
  const size = Number(value);
  return validateLedgerSize(Number.isNaN(size) ? value.trim() : size, 'SUNDIAL_LEDGER');
}

function boundedCount(value: unknown, field: string, fallback: number, max: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= max) return value;
  throw refusals.invalid(
    field,
    `${field} ${showValue(value)} is not a whole number from 1 to ${max}`,
    `Pass ${field} between 1 and ${max}, or leave it out for ${fallback}.`,
  );
}

/**
 * The counters: `runs` from the row (every run, exact); the others counted over the entries the
 * ledger holds (its last `size` entries: a long-lived timer's older ones have been trimmed) since the
 * timer was scheduled — its newest `scheduled` entry; what is older belongs to an earlier timer of its
 * key (cancelled, replaced or ended before it was scheduled again), as does a `stale` `gone` entry
 * (a job or run of a timer that is not the row's).
 */
export function countersOf(timer: Timer, entries: readonly LedgerEntry[]): TimerCounters {
  const counters: TimerCounters = {
    runs: timer.runCount,
    failures: 0,
    stale: 0,
    skipped: 0,
    lost: 0,
    requeued: 0,
  };
  for (const entry of entries) {
    if (entry.event === 'scheduled') break;
    if (entry.event === 'failed') counters.failures += 1;
    // a `lost` entry's reason 'requeued': its run was put back and ran again, it was not lost
    else if (entry.event === 'lost') counters[entry.reason === 'requeued' ? 'requeued' : 'lost'] += 1;
    else if (entry.event === 'stale' && entry.reason !== 'gone') counters.stale += 1;
    else if (entry.event === 'skipped') counters.skipped += entry.count ?? 1;
  }
  return counters;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * The ledger entry of an engine event (the Redis scripts write the same entries, includes/ledger.lua):
 * `running` is the claim, a `scheduled` with a reason is the operation that armed it again.
 */
export function ledgerEntryOf(event: TimerEvent): LedgerEntry | null {
  const name = ledgerEventName(event);
  if (!name) return null;
  const entry: LedgerEntry = { at: iso(event.at), event: name, version: event.version };
  if (event.type === 'failed') {
    // a failed run's reason is its error's; the event's own, why the run ended its timer, is `ended`
    if (event.reason !== undefined) entry.ended = event.reason;
  } else if (event.reason !== undefined && name !== 'replaced' && !SCHEDULE_REASONS.has(event.reason)) {
    entry.reason = event.reason;
  }
  if (event.error) {
    entry.message = event.error.message;
    if (event.error.reason !== undefined) entry.reason = event.error.reason;
  }
  if (event.count !== undefined) entry.count = event.count;
  if (event.attempt !== undefined) entry.attempt = event.attempt;
  // A creation's due is in the row; its entry is the one Redis implies from the row, which has none. A
  // `skipped` event's due is the engine's own (docs/spec.md §3.6): its entry has none, as on Redis.
  if (event.due !== undefined && name !== 'scheduled' && name !== 'skipped') entry.due = iso(event.due);
  return entry;
}

const SCHEDULE_REASONS = new Set(['reschedule', 'resume', 'trigger', 'backfill']);

function ledgerEventName(event: TimerEvent): LedgerEventName | null {
  switch (event.type) {
    case 'scheduled':
      if (event.reason === 'reschedule') return 'rescheduled';
      if (event.reason === 'resume') return 'resumed';
      if (event.reason === 'trigger') return 'triggered';
      if (event.reason === 'backfill') return 'backfilled';
      return 'scheduled';
    case 'running':
      return 'claimed';
    case 'cancelled':
      return event.reason === 'replaced' ? 'replaced' : 'cancelled';
    case 'failed':
      // Never `lost`: the engine loses no runs, and a handler's error may carry reason 'lost' too — its
      // run failed (Redis writes `lost` only for a run it settles as lost, includes/ledger.lua).
      return 'failed';
    case 'completed':
    case 'stale':
    case 'skipped':
    case 'paused':
      return event.type;
    default:
      return null;
  }
}
