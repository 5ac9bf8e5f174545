/**
 * Reschedule from the timer's page (`POST /v1/timers/:key/reschedule`, docs/spec.md §3.4): one field takes
 * a delay from now (`10m`, `2h`) or an instant (`2026-12-07T09:00:00Z`), sent as the API's `delay` or `at`
 * as typed, so the API checks it and its refusal (reason, field, fix) is what the operator reads; the page
 * is drawn again from the API afterwards, not from what was typed. A paused timer is resumed by it, which
 * its button and notice say.
 */
import { api, timerPath } from '../api.js';
import { h } from '../dom.js';
import { notify, notifyError } from '../notice.js';
import type { OneAtATime } from '../one-at-a-time.js';
import type { Timer } from '../types.js';
import { formatTime } from '../format.js';
import { changedSince, readAsShown } from './actions.js';

/** An instant starts with its year (`2026-…`); anything else is read as a delay from now. */
export function rescheduleBody(text: string): { delay: string } | { at: string } {
  return /^\d{4}-/.test(text) ? { at: text } : { delay: text };
}

export function rescheduleForm(timer: Timer, rerender: () => void, oneAtATime: OneAtATime): HTMLElement {
  // pending or paused (a reschedule resumes it); running and ended timers are refused by the API
  const allowed = timer.status === 'pending' || timer.status === 'paused';
  const input = h('input', {
    name: 'due',
    required: true,
    disabled: !allowed,
    placeholder: 'e.g. 2h or 2026-12-07T09:00:00Z',
  }) as HTMLInputElement;
  const form = h(
    'form',
    { class: 'filters', 'aria-label': 'Reschedule' },
    h('label', {}, 'New due time (a delay from now, or an instant)', input),
    h('button', { type: 'submit', disabled: !allowed }, 'Reschedule'),
    // the API resumes a paused timer it reschedules (docs/spec.md §5.2): a timer paused to stop it firing
    // was resumed by a press that said only "Reschedule", and the notice did not say so either
    ...(timer.status === 'paused'
      ? [h('p', { class: 'muted' }, 'It is paused: Reschedule resumes it.')]
      : []),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void oneAtATime(async () => {
      try {
        const body = rescheduleBody(input.value.trim());
        // the timer the page shows, not one put under its key since (actions.ts)
        const before = await readAsShown(timer);
        const moved = await api<Timer>('POST', timerPath(timer.key, 'reschedule'), {}, body);
        const resumed = before?.status === 'paused' ? ' and resumed (it was paused)' : '';
        notify(
          `${timer.key}: rescheduled${resumed}, due ${formatTime(moved.dueAt)}.${changedSince(timer, before)}`,
        );
        rerender();
      } catch (error) {
        notifyError(error, timer.key);
      }
    });
  });
  return form;
}
