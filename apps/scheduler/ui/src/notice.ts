/** The one status line under the header (an aria-live region): what an action did, or why it was refused. */
import { api, ApiError } from './api.js';
import { h } from './dom.js';
import { lastList } from './last-list.js';
import { oneAtATime } from './one-at-a-time.js';
import { uiFix } from './ui-fix.js';
import { doneText, type SentWrite, takeLost } from './write-key.js';

/**
 * A notice belongs to the page it was written on (`location.hash` then): an action that moves on first
 * (Cancel goes to the list) sets the new location before writing, so its notice is the new page's.
 */
export function notify(text: string, kind: 'info' | 'error' = 'info'): void {
  const notice = document.getElementById('notice')!;
  notice.textContent = text;
  notice.className = kind;
  notice.dataset.page = location.hash;
  delete notice.dataset.read;
}

/**
 * A read's refusal (the list, a timer, the timeline could not be read): it is marked, so that a read of
 * the same page that answers later (Refresh once Redis or the scheduler is back) takes it away. Before, the
 * "Redis is unreachable" notice stayed above the fresh list it no longer applied to. A notice offering
 * Retry (a write's lost answer) is left: it is about that write, not the read.
 */
export function notifyReadError(error: unknown, key?: string): void {
  notifyError(error, key);
  const notice = document.getElementById('notice')!;
  if (!notice.querySelector('button')) notice.dataset.read = 'true';
}

/** A read of this page answered: a read's refusal written on it is no longer true (notifyReadError). */
export function clearReadError(): void {
  const notice = document.getElementById('notice')!;
  if (notice.dataset.read !== 'true' || notice.dataset.page !== location.hash) return;
  notice.textContent = '';
  notice.className = '';
  delete notice.dataset.page;
  delete notice.dataset.read;
}

/**
 * On a move to another page: a notice written for an earlier one goes (a refusal of the last timer
 * read above a timer that loaded fine looked like this one's error); one written for this page stays.
 */
export function clearStaleNotice(): void {
  const notice = document.getElementById('notice')!;
  if (notice.dataset.page === location.hash) return;
  notice.textContent = '';
  notice.className = '';
  delete notice.dataset.page;
  delete notice.dataset.read;
}

/**
 * A refusal reads as reason, message, and the fix in this page's terms (ui-fix.ts); `key` is the timer
 * the action was about, for a fix that points to its scope.
 */
export function notifyError(error: unknown, key?: string): void {
  const write = takeLost();
  if (write === undefined) {
    notify(describeError(error, key), 'error');
    return;
  }
  // its answer was lost (write-key.ts): the same request with the same key is safe, so offer it
  const what =
    error instanceof ApiError
      ? `${error.reason}: ${error.message.replace(/\.$/, '')}.`
      : `The answer was lost (${describeError(error)}): it may or may not have been applied.`;
  notify(`${what} Fix: ${RETRY}`, 'error');
  const button = h(
    'button',
    { type: 'button', onclick: () => void retryGuard(() => retry(write), write.key) },
    'Retry',
  );
  document.getElementById('notice')!.append(' ', button);
}

const RETRY =
  'Press Retry: it sends the same request again with the same Idempotency-Key, so the scheduler answers ' +
  "the first try's outcome, or applies it now — once either way.";

const retryGuard = oneAtATime();

async function retry(write: SentWrite): Promise<void> {
  try {
    const answer = await api<unknown>(write.method, write.path, write.query, write.json);
    const page = location.hash;
    // a cancelled timer's page has nothing left to show: to the list first, as Cancel does (actions.ts)
    if (write.method === 'DELETE' && write.path !== 'timers') location.hash = lastList();
    notify(`${doneText(write, answer)} Retried with the same Idempotency-Key: applied once.`);
    if (location.hash === page) window.dispatchEvent(new HashChangeEvent('hashchange'));
  } catch (error) {
    notifyError(error);
  }
}

export function describeError(error: unknown, key?: string): string {
  if (error instanceof ApiError) {
    const fix = uiFix(error, key);
    return `${error.reason}: ${error.message.replace(/\.$/, '')}.${fix ? ` Fix: ${fix}` : ''}`;
  }
  return error instanceof Error ? error.message : String(error);
}
