/**
 * Each press's writes carry one fresh `Idempotency-Key` (docs/spec.md §5.2, §5.6): the API answers a
 * re-send with the same key as it answered the first, and applies the write at most once. A write whose
 * answer was lost (503 `outcome-unknown`: it may or may not have been applied; or the network failed) is
 * kept here, so the notice can offer Retry: the same request with the same key, safe either way.
 */

/** A write as sent: enough to send it again as it was. */
export interface SentWrite {
  readonly method: string;
  readonly path: string;
  readonly query: Record<string, string>;
  readonly json?: Record<string, unknown>;
  readonly key: string;
}

let pressKey: string | undefined;
let lost: SentWrite | undefined;

/** A press begins (one-at-a-time.ts): its writes get a new key, and an earlier lost write is no longer offered. */
export function beginPress(key: string = crypto.randomUUID()): void {
  pressKey = key;
  lost = undefined;
}

export function endPress(): void {
  pressKey = undefined;
}

/**
 * The key for a write sent now: the press's (none outside a press: reads send none, and so does
 * `POST preview`, which writes nothing — a lost one is not a write to offer again).
 */
export function writeKey(method: string, path: string): string | undefined {
  return method === 'GET' || method === 'OPTIONS' || path === 'preview' ? undefined : pressKey;
}

export function noteLost(write: SentWrite): void {
  lost = write;
}

/** The write whose answer was lost last, once (the notice that offers it takes it). */
export function takeLost(): SentWrite | undefined {
  const write = lost;
  lost = undefined;
  return write;
}

const DONE: Record<string, string> = {
  pause: 'paused',
  resume: 'resumed',
  trigger: 'triggered',
  reschedule: 'rescheduled',
};

/** What a retried write did, in the words of the press's own notice. */
export function doneText(write: SentWrite, answer: unknown): string {
  const [, encoded, action] = write.path.split('/');
  const key = encoded === undefined ? '' : decodeURIComponent(encoded);
  if (write.method === 'DELETE' && encoded === undefined) {
    const cancelled = (answer as { cancelled?: number } | null)?.cancelled ?? 0;
    return `Cancelled ${cancelled} ${cancelled === 1 ? 'timer' : 'timers'} with prefix “${write.query.prefix}”.`;
  }
  if (write.method === 'DELETE') {
    const { cancelled, removed } = (answer ?? {}) as { cancelled?: boolean; removed?: string };
    return cancelled === false
      ? `${key} had ended (${removed}) before the cancel: nothing was cancelled; its kept row was removed.`
      : `${key}: cancelled.`;
  }
  if (action !== undefined) return `${key}: ${DONE[action] ?? action}.`;
  return `${String(write.json?.key ?? '')}: scheduled again.`;
}
