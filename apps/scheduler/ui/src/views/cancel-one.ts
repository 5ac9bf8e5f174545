/**
 * The timer page's Cancel (docs/spec.md §3.4, §5.2, §5.6): what the DELETE did, in a sentence, though the
 * page was read before another change — as the CLI's `sundial cancel` says it (apps/cli/src/commands/cancel.ts).
 */
import { api, ApiError, timerPath } from '../api.js';
import { formatTime } from '../format.js';
import type { CancelAnswer, LedgerEntry } from '../types.js';

/**
 * Cancels `key` and says what happened: cancelled; or the timer had ended (kept by `removeOnComplete:
 * false`) and its row was removed; or — the DELETE meeting no timer (404 `not-found` on `key`) — someone
 * cancelled it since the page was read, when its ledger (`GET …/history`) ends with that cancel: nothing
 * changed. Any other refusal, and a 404 whose ledger says otherwise, is thrown as it came.
 */
export async function cancelTimer(key: string): Promise<string> {
  let answer: CancelAnswer;
  try {
    answer = await api<CancelAnswer>('DELETE', timerPath(key));
  } catch (error) {
    const cancelledAt = isKeyNotFound(error) ? await lastCancel(key) : undefined;
    if (cancelledAt === undefined) throw error;
    return `${key} was already cancelled at ${formatTime(cancelledAt)}: nothing changed.`;
  }
  return answer.cancelled
    ? `${key}: cancelled.`
    : `${key} had ended (${answer.removed}) before the cancel: nothing was cancelled; its kept row was removed.`;
}

function isKeyNotFound(error: unknown): boolean {
  return error instanceof ApiError && error.reason === 'not-found' && error.field === 'key';
}

/** When the key was cancelled, when its newest ledger entry is that cancel (none: no ledger, or another end). */
async function lastCancel(key: string): Promise<string | undefined> {
  const history = await api<{ entries: LedgerEntry[] }>('GET', timerPath(key, 'history'), {
    limit: '1',
  }).catch(() => undefined);
  const [newest] = history?.entries ?? [];
  return newest?.event === 'cancelled' ? newest.at : undefined;
}
