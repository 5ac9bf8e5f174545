import { refusals } from '@sundial/core';

// Why a file of its own: TimerRunner and SundialWorkerModule take the option and must refuse the same
// values with the same words.

/**
 * How long before a timer's due (Redis's clock) the runner sends its claim, by default. The claim's
 * round trip then happens before the due instead of after it: at 1,000 runs/s on a loaded 2-core host
 * a claim's answer took ~0.3–1 ms as a rule and a few ms in its slowest percent (Redis busy with a
 * take-due or a completion batch of 1–3 ms, the worker's event loop stalled); 5 ms covers all but the
 * stalls. More buys little and widens the window in which a claimed run waits for its due (a cancel
 * meets it running, a reschedule is refused `inactive`: docs/spec.md §3.2).
 */
export const DEFAULT_CLAIM_AHEAD_MS = 5;
/**
 * The most a claim may go ahead: far below the dispatcher's 200 ms lead, so a job still arrives before
 * its timers' claims are due, and short enough that a claimed run's wait stays a few ms of its lease.
 */
export const MAX_CLAIM_AHEAD_MS = 50;

/** `claimAheadMs` as given (default DEFAULT_CLAIM_AHEAD_MS), or the `invalid` refusal of `field`. */
export function claimAheadOf(value: unknown, field = 'claimAheadMs'): number {
  if (value === undefined) return DEFAULT_CLAIM_AHEAD_MS;
  if (Number.isSafeInteger(value) && (value as number) >= 0 && (value as number) <= MAX_CLAIM_AHEAD_MS)
    return value as number;
  throw refusals.invalid(
    field,
    `${field} ${JSON.stringify(value) ?? String(value)} is not an integer from 0 to ${MAX_CLAIM_AHEAD_MS} (ms before a timer's due that its claim goes).`,
    `Write ${field} as an integer from 0 to ${MAX_CLAIM_AHEAD_MS}, e.g. ${DEFAULT_CLAIM_AHEAD_MS}, or leave it out for the default (${DEFAULT_CLAIM_AHEAD_MS}); 0 claims each timer at its due.`,
  );
}
