/**
 * "Run again" for a one-shot that ended and was kept (`removeOnComplete: false`, status completed or
 * failed): the not-found fix says such a timer is scheduled again to run, and a support engineer
 * re-running a failed timer should not need the CLI for it. The page schedules it anew through the same
 * API as any client (`POST /v1/timers`, due now) with what the kept row holds — handler, payload, meta,
 * delivery, retry, timeout, removeOnComplete — so the API's checks and refusals apply as they are: a
 * timer scheduled under the key meanwhile is `duplicate-key` (Refresh shows it), an owned row's meta is
 * refused `invalid`. A one-shot removed when it ended left no row to copy: its page shows the ledger only.
 */
import { api } from '../api.js';
import { h } from '../dom.js';
import { notify, notifyError } from '../notice.js';
import type { Timer } from '../types.js';

/** Whether the page offers Run again: a kept one-shot that ended. */
export function canRunAgain(timer: Timer): boolean {
  return timer.kind === 'once' && (timer.status === 'completed' || timer.status === 'failed');
}

/** The TimerSpec that schedules `timer` again, due now: its own options, none added or dropped. */
export function runAgainSpec(timer: Timer): Record<string, unknown> {
  const spec: Record<string, unknown> = {
    key: timer.key,
    handler: timer.handler,
    payload: timer.payload,
    delay: 0,
    delivery: timer.delivery,
  };
  if (timer.removeOnComplete !== undefined) spec.removeOnComplete = timer.removeOnComplete;
  if (timer.meta !== undefined) spec.meta = timer.meta;
  if (timer.retry !== undefined) spec.retry = timer.retry;
  if (timer.timeout !== undefined) spec.timeout = timer.timeout;
  return spec;
}

export function runAgainButton(timer: Timer, rerender: () => void): HTMLElement {
  const run = async (): Promise<void> => {
    const question = `Run “${timer.key}” again now? It is scheduled anew under its key, with its handler, payload and options.`;
    if (!confirm(question)) return;
    try {
      const created = await api<Timer>('POST', 'timers', {}, runAgainSpec(timer));
      notify(`${timer.key}: scheduled again, due now (id ${created.id}).`);
      rerender();
    } catch (error) {
      notifyError(error, timer.key);
    }
  };
  return h('button', { type: 'button', onclick: () => void run() }, 'Run again');
}
