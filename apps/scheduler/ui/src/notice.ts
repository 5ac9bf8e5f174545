/** The one status line under the header (an aria-live region): what an action did, or why it was refused. */
import { ApiError } from './api.js';

export function notify(text: string, kind: 'info' | 'error' = 'info'): void {
  const notice = document.getElementById('notice')!;
  notice.textContent = text;
  notice.className = kind;
}

/** A refusal reads as the API wrote it: reason, message, and the fix. */
export function notifyError(error: unknown): void {
  notify(describeError(error), 'error');
}

export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    const tokenHint = error.status === 401 ? ' Enter the API token above.' : '';
    return `${error.reason}: ${error.message}.${error.fix ? ` Fix: ${error.fix}` : ''}${tokenHint}`;
  }
  return error instanceof Error ? error.message : String(error);
}
