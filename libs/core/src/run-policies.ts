import { toMs } from './duration';
import { type Input, isGiven, oneOf, plainObject, rejectUnknownFields } from './input-checks';
import { refusals } from './refusals';
import { runTimeoutMs } from './run-timeout';
import { showValue } from './show-value';
import type { NormalizedSpec, OverlapPolicy, RetryPolicy, TimerKind } from './types';

/* The run policies of a spec (docs/spec.md §3.2, §3.3a, §3.3b): overlap, retry, pauseAfterFailures, timeout. */

const OVERLAPS: readonly OverlapPolicy[] = ['skip', 'buffer-one', 'allow', 'cancel-other'];
const BACKOFF_TYPES = ['fixed', 'exponential'] as const;
const RETRY_FIELDS = ['attempts', 'backoff'];
const BACKOFF_FIELDS = ['type', 'delay', 'maxDelay'];
/** A retry spec without `backoff` waits this long before each retry. */
export const DEFAULT_RETRY_DELAY_MS = 1_000;
const MAX_ATTEMPTS = 100;
const MAX_RETRY_DELAY_MS = 365 * 86_400_000;

type RunPolicies = Pick<NormalizedSpec, 'awaitTask' | 'overlap' | 'retry' | 'pauseAfterFailures' | 'timeout'>;

/**
 * The overlap, retry, pauseAfterFailures and timeout of a spec, with the awaitTask they imply: a periodic
 * timer whose slots do not wait for the run before them (`allow`, `cancel-other`) does not await its task.
 * `awaitTask` is the value validation.ts read (default true); `awaitTaskGiven` whether the spec said it.
 * A timeout (1 ms to 365 days, any kind) bounds each run as `withTimeout` does.
 */
export function normalizeRunPolicies(
  input: Input,
  kind: TimerKind,
  awaitTask: boolean,
  awaitTaskGiven: boolean,
): RunPolicies {
  const overlap = normalizeOverlap(input.overlap, kind, awaitTask, awaitTaskGiven);
  // Not given: an interval's awaitTask says it ('allow' when false), as before overlap existed.
  const detached = overlap === undefined ? !awaitTask : overlap === 'allow' || overlap === 'cancel-other';
  const retry = normalizeRetry(input.retry, detached);
  const pauseAfterFailures = normalizePauseAfterFailures(input.pauseAfterFailures, kind, detached);
  // set one by one, not spread: this runs per spec of a scheduleMany
  const policies: RunPolicies = { awaitTask: !detached };
  if (overlap !== undefined) policies.overlap = overlap;
  if (retry !== undefined) policies.retry = retry;
  if (pauseAfterFailures !== undefined) policies.pauseAfterFailures = pauseAfterFailures;
  if (isGiven(input.timeout)) policies.timeout = runTimeoutMs(input.timeout);
  return policies;
}

/** How long a run that failed on try `attempt` waits before its retry (docs/spec.md §3.3b); complete.lua mirrors it. */
export function retryDelay(retry: RetryPolicy, attempt: number): number {
  const { type, delay, maxDelay } = retry.backoff;
  const wait = type === 'fixed' ? delay : delay * 2 ** (attempt - 1);
  return Math.min(wait, maxDelay ?? Infinity);
}

function normalizeOverlap(
  value: unknown,
  kind: TimerKind,
  awaitTask: boolean,
  awaitTaskGiven: boolean,
): OverlapPolicy | undefined {
  if (!isGiven(value)) return undefined;
  const overlap = oneOf(value, 'overlap', OVERLAPS);
  if (kind === 'once') {
    throw refusals.invalid(
      'overlap',
      `overlap ${showValue(value)} was given for a one-shot timer (delay/at), whose run cannot overlap another`,
      'Remove overlap, or use every or cron for a timer that repeats.',
    );
  }
  const detached = overlap === 'allow' || overlap === 'cancel-other';
  if (awaitTaskGiven && awaitTask === detached) {
    throw refusals.invalid(
      'awaitTask',
      `awaitTask ${String(awaitTask)} contradicts overlap ${showValue(overlap)}`,
      `Remove awaitTask: overlap "${overlap}" ${detached ? 'arms the next slot while a run goes on (awaitTask false)' : 'waits for the run (awaitTask true)'}.`,
    );
  }
  return overlap;
}

function normalizeRetry(value: unknown, detached: boolean): RetryPolicy | undefined {
  if (!isGiven(value)) return undefined;
  const input = plainObject(
    value,
    'retry',
    '{ "attempts": 3, "backoff": { "type": "exponential", "delay": "1s" } }',
  );
  rejectUnknownFields(input, RETRY_FIELDS, 'retry');
  const { attempts } = input;
  if (!Number.isSafeInteger(attempts) || (attempts as number) < 1 || (attempts as number) > MAX_ATTEMPTS) {
    throw refusals.invalid(
      'retry.attempts',
      `retry.attempts ${showValue(attempts)} is not a whole number from 1 to ${MAX_ATTEMPTS}`,
      'Write retry.attempts as the number of tries in all, the first one included, e.g. 3 (a run and up to 2 retries).',
    );
  }
  if (detached) {
    throw refusals.invalid(
      'retry',
      'retry was given for a timer whose slots do not wait for its runs (overlap "allow" or "cancel-other", or awaitTask false)',
      'Remove retry, or use overlap "skip" or "buffer-one": a retry holds its slot, and these slots run without waiting.',
    );
  }
  return { attempts: attempts as number, backoff: normalizeBackoff(input.backoff) };
}

function normalizeBackoff(value: unknown): RetryPolicy['backoff'] {
  if (!isGiven(value)) return { type: 'fixed', delay: DEFAULT_RETRY_DELAY_MS };
  const input = plainObject(
    value,
    'retry.backoff',
    '{ "type": "exponential", "delay": "1s", "maxDelay": "1m" }',
  );
  rejectUnknownFields(input, BACKOFF_FIELDS, 'retry.backoff');
  const type = oneOf(input.type, 'retry.backoff.type', BACKOFF_TYPES);
  const delay = isGiven(input.delay)
    ? retryDelayField(input.delay, 'retry.backoff.delay')
    : DEFAULT_RETRY_DELAY_MS;
  if (!isGiven(input.maxDelay)) return { type, delay };
  const maxDelay = retryDelayField(input.maxDelay, 'retry.backoff.maxDelay');
  if (maxDelay < delay) {
    throw refusals.invalid(
      'retry.backoff.maxDelay',
      `retry.backoff.maxDelay ${showValue(input.maxDelay)} is shorter than retry.backoff.delay ${showValue(input.delay)}`,
      'Write maxDelay as at least delay, or remove it.',
    );
  }
  return { type, delay, maxDelay };
}

function retryDelayField(value: unknown, field: string): number {
  const ms = toMs(value as number | string, field);
  if (ms < 0 || ms > MAX_RETRY_DELAY_MS) {
    throw refusals.invalid(
      field,
      `${field} ${showValue(value)} is not between 0 and 365 days`,
      `Write ${field} as a duration from 0 to "365d", e.g. "30s".`,
    );
  }
  return ms;
}

function normalizePauseAfterFailures(value: unknown, kind: TimerKind, detached: boolean): number | undefined {
  if (!isGiven(value)) return undefined;
  if (!Number.isSafeInteger(value) || (value as number) < 1) {
    throw refusals.invalid(
      'pauseAfterFailures',
      `pauseAfterFailures ${showValue(value)} is not a positive integer`,
      'Write pauseAfterFailures as a number of failed runs in a row, 1 or more, e.g. 5.',
    );
  }
  if (kind === 'once' || (kind === 'interval' && !detached)) {
    throw refusals.invalid(
      'pauseAfterFailures',
      kind === 'once'
        ? `pauseAfterFailures ${showValue(value)} was given for a one-shot timer (delay/at), which fails once at most`
        : `pauseAfterFailures ${showValue(value)} was given for an interval that awaits its task, which a failed run ends`,
      kind === 'once'
        ? 'Remove pauseAfterFailures, or use every or cron for a timer that repeats.'
        : 'Remove pauseAfterFailures, or give the interval overlap "allow" (awaitTask false) so it goes on after a failure.',
    );
  }
  return value as number;
}
