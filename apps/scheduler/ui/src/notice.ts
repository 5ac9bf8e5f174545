/** The one status line under the header (an aria-live region): what an action did, or why it was refused. */
import { ApiError } from './api.js';
import { uiFix } from './ui-fix.js';

/**
 * A notice belongs to the page it was written on (`location.hash` then): an action that moves on first
 * (Cancel goes to the list) sets the new location before writing, so its notice is the new page's.
 */
export function notify(text: string, kind: 'info' | 'error' = 'info'): void {
  const notice = document.getElementById('notice')!;
  notice.textContent = text;
  notice.className = kind;
  notice.dataset.page = location.hash;
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
}

/**
 * A refusal reads as reason, message, and the fix in this page's terms (ui-fix.ts); `key` is the timer
 * the action was about, for a fix that points to its scope.
 */
export function notifyError(error: unknown, key?: string): void {
  notify(describeError(error, key), 'error');
}

export function describeError(error: unknown, key?: string): string {
  if (error instanceof ApiError) {
    const fix = uiFix(error, key);
    return `${error.reason}: ${error.message.replace(/\.$/, '')}.${fix ? ` Fix: ${fix}` : ''}`;
  }
  return error instanceof Error ? error.message : String(error);
}
