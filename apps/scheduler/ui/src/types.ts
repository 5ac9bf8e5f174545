/**
 * The JSON shapes the UI reads (docs/spec.md §2, §5.2, §3.9): the wire format of libs/core's Timer,
 * LedgerEntry and NextTime, written again on purpose. The browser build is its own program (DOM types,
 * ES modules, rootDir src): a type import from libs/ would pull core's sources into it and emit them.
 */

export type TimerStatus = 'pending' | 'running' | 'paused' | 'completed' | 'failed' | 'cancelled';

export interface Timer {
  id: string;
  key: string;
  version: number;
  kind: 'once' | 'interval' | 'cron';
  status: TimerStatus;
  handler: string;
  payload: unknown;
  scheduledAt: number;
  dueAt: number;
  delayMs?: number;
  everyMs?: number;
  /** ms one run may take (the timer's `timeout`), when it has one */
  timeout?: number;
  cron?: string;
  tz?: string;
  maxRuns?: number;
  awaitTask: boolean;
  removeOnComplete?: boolean;
  /** §3.3a: a periodic timer's, when not the default 'skip' */
  overlap?: string;
  /** §3.3b: `{ attempts, backoff }` as the spec gave it, delays in ms */
  retry?: Record<string, unknown>;
  pauseAfterFailures?: number;
  /** §3.3c: a periodic timer's slot policies, durations and instants in ms */
  catchup?: string;
  catchupWindow?: number;
  jitter?: number;
  startAt?: number;
  endAt?: number;
  runCount: number;
  delivery: string;
  lastFiredAt: number | null;
  lastCompletedAt: number | null;
  lastErrorAt: number | null;
  last: {
    started: number;
    ended?: number;
    status: string;
    error?: { message: string; reason?: string };
  } | null;
  meta?: unknown;
}

export interface ListResult {
  items: Timer[];
  nextCursor: string | null;
}

export interface LedgerEntry {
  at: string;
  event: string;
  version: number;
  workerId?: string;
  reason?: string;
  /** failed / lost: why the run ended its timer (no-next-slot, ended, max-runs); absent when it did not */
  ended?: string;
  message?: string;
  count?: number;
  attempt?: number;
  due?: string;
}

export interface NextTime {
  at: string;
  offset: string;
}

/** Per timer (§3.9): `runs` from the row, the others counted over the kept ledger entries. */
export interface TimerCounters {
  runs: number;
  failures: number;
  stale: number;
  skipped: number;
  lost: number;
  requeued: number;
}

/** `POST /v1/preview`'s answer (§5.2): the spec as it would be scheduled, and its next times. */
export interface Preview {
  next: NextTime[];
}

/** `GET /v1/timers/:key/describe`'s answer (§5.2): the timer, its next times, its ledger and counters. */
export interface TimerDescription {
  timer: Timer;
  next: NextTime[];
  history: LedgerEntry[];
  counters: TimerCounters;
}

/** `DELETE /v1/timers/:key`'s answer (§5.2): a live timer cancelled, or the kept row of one that had ended removed. */
export type CancelAnswer = { cancelled: true } | { cancelled: false; removed: 'completed' | 'failed' };
