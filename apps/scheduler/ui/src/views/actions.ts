/**
 * The timer page's Pause, Resume, Trigger now and Cancel (docs/spec.md §3.4, §5.6). Each acts on the timer
 * the page shows: the timer under the key is read just before, and when it is another timer (replaced
 * since the page was read: another id) nothing is sent — a Cancel used to cancel the timer someone had
 * just put in its place, unseen. One whose version moved (another operator paused, resumed, rescheduled
 * or triggered it) is acted on, and the notice says it had changed.
 */
import { api, ApiError, timerPath } from '../api.js';
import { h } from '../dom.js';
import { formatTime } from '../format.js';
import { lastList } from '../last-list.js';
import { notify, notifyError } from '../notice.js';
import type { OneAtATime } from '../one-at-a-time.js';
import type { Timer } from '../types.js';
import { againButton } from './again.js';
import { cancelTimer } from './cancel-one.js';

type Action = 'pause' | 'resume' | 'trigger' | 'cancel';
const DONE: Record<Action, string> = {
  pause: 'paused',
  resume: 'resumed',
  trigger: 'triggered',
  cancel: 'cancelled',
};

/**
 * The timer under the shown one's key now, or undefined when there is none (`not-found` on `key`: a
 * Cancel says what became of it, cancel-one.ts). Another timer there is refused here, nothing sent.
 */
export async function readAsShown(shown: Timer): Promise<Timer | undefined> {
  let current: Timer;
  try {
    current = await api<Timer>('GET', timerPath(shown.key));
  } catch (error) {
    if (error instanceof ApiError && error.reason === 'not-found' && error.field === 'key') return undefined;
    throw error;
  }
  if (current.id === shown.id) return current;
  throw new Error(
    `changed: “${shown.key}” is another timer since this page was read (id ${shown.id}, now id ${current.id}, ` +
      `${current.status}, scheduled ${formatTime(current.scheduledAt)}): nothing was sent. ` +
      'Fix: Press Refresh to see the timer now under the key, then act on it if you still mean to.',
  );
}

/** What to add to a done action's notice when the timer had changed since the page was read. */
export function changedSince(shown: Timer, current: Timer | undefined): string {
  return current && current.version !== shown.version
    ? ` It had changed since this page was read (version ${shown.version}, then ${current.version}).`
    : '';
}

/**
 * Pausing a paused timer or resuming one not paused changes nothing (docs/spec.md §3.4) and the API answers
 * the timer either way: its version, read just before, tells the two apart (the page's may be stale).
 */
async function act(shown: Timer, action: Exclude<Action, 'cancel'>): Promise<string> {
  const { key } = shown;
  const before = await readAsShown(shown);
  const answer = await api<Timer>('POST', timerPath(key, action));
  if (action === 'trigger' || answer.version !== before?.version) {
    return `${key}: ${DONE[action]}.${changedSince(shown, before)}`;
  }
  return `${key} was ${action === 'pause' ? 'already paused' : 'not paused'}: nothing changed.`;
}

/** Each action is offered when the timer's status allows it; the API still has the last word. */
export function actions(timer: Timer, rerender: () => void, oneAtATime: OneAtATime): HTMLElement {
  const live = ['pending', 'running', 'paused'].includes(timer.status);
  const allowed: Record<Action, boolean> = {
    pause: timer.status === 'pending',
    resume: timer.status === 'paused',
    trigger: timer.status === 'pending',
    cancel: live,
  };
  const run = async (action: Action): Promise<void> => {
    if (action === 'cancel' && !confirm(`Cancel timer “${timer.key}”? It will not run again.`)) return;
    try {
      if (action === 'cancel') {
        const before = await readAsShown(timer);
        // cancelled; or, since the page was read, it ended (its kept row removed) or was cancelled already
        const said = await cancelTimer(timer.key);
        // to the list it came from first: the notice is the list's (notice.ts)
        location.hash = lastList();
        notify(`${said}${changedSince(timer, before)}`);
        return;
      }
      notify(await act(timer, action));
      rerender();
    } catch (error) {
      notifyError(error, timer.key);
    }
  };
  const labels: Record<Action, string> = {
    pause: 'Pause',
    resume: 'Resume',
    trigger: 'Trigger now',
    cancel: 'Cancel timer',
  };
  return h(
    'div',
    { class: 'actions', role: 'group', 'aria-label': 'Actions' },
    ...(Object.keys(labels) as Action[]).map((action) =>
      h(
        'button',
        {
          type: 'button',
          class: action === 'cancel' ? 'danger' : '',
          disabled: !allowed[action],
          onclick: () => void oneAtATime(() => run(action)),
        },
        labels[action],
      ),
    ),
    againButton(timer, rerender, oneAtATime),
    h('button', { type: 'button', onclick: rerender }, 'Refresh'),
  );
}
