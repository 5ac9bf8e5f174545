/** The one status line under the header (an aria-live region): what an action did, or why it was refused. */
import { ApiError } from './api.js';
import { uiFix } from './ui-fix.js';

export function notify(text: string, kind: 'info' | 'error' = 'info'): void {
  const notice = document.getElementById('notice')!;
  notice.textContent = text;
  notice.className = kind;
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
