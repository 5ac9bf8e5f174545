/**
 * One timer: its fields (the payload and meta only when asked), the actions an operator takes
 * (pause, resume, trigger, cancel), its next times and its ledger (what happened to it, newest first).
 */
import { api, timerPath } from '../api.js';
import { h, statusBadge, table } from '../dom.js';
import { durationText } from '../duration-text.js';
import { formatTime, lastRun, relative, schedule } from '../format.js';
import { describeError, notify, notifyError } from '../notice.js';
import type { LedgerEntry, NextTimes, Timer } from '../types.js';
import { cancelTimer } from './cancel-one.js';
import { rescheduleForm } from './reschedule.js';
import { againButton, ownerNote } from './again.js';

const NEXT_COUNT = 10;
const LEDGER_LIMIT = 50;

export function timerView(key: string, rerender: () => void): HTMLElement {
  const section = h('section', {}, h('h1', {}, key), h('p', {}, 'Loading…'));
  void api<Timer>('GET', timerPath(key)).then(
    (timer) => section.replaceChildren(...render(timer, rerender)),
    (error: unknown) => {
      notifyError(error, key);
      section.replaceChildren(
        h('h1', {}, key),
        h('p', {}, describeError(error, key)),
        // `unavailable`'s fix says to retry, and a key scheduled since shows here: Refresh does both
        h(
          'p',
          {},
          h('button', { type: 'button', onclick: rerender }, 'Refresh'),
          ' ',
          h('a', { href: '#/' }, 'All timers'),
        ),
        endedLedger(key),
      );
    },
  );
  return section;
}

function render(timer: Timer, rerender: () => void): HTMLElement[] {
  return [
    h('h1', {}, timer.key, ' ', statusBadge(timer.status)),
    actions(timer, rerender),
    ...ownerNote(timer),
    rescheduleForm(timer, rerender),
    h(
      'div',
      { class: 'columns' },
      h('div', {}, h('h2', {}, 'Timer'), fields(timer), payloadToggle(timer)),
      h('div', {}, h('h2', {}, 'Next times'), nextTimes(timer)),
    ),
    h('h2', {}, 'Ledger'),
    ledger(timer.key),
  ];
}

type Action = 'pause' | 'resume' | 'trigger' | 'cancel';
const DONE: Record<Action, string> = {
  pause: 'paused',
  resume: 'resumed',
  trigger: 'triggered',
  cancel: 'cancelled',
};

/**
 * Pausing a paused timer or resuming one not paused changes nothing (docs/spec.md §3.4) and the API answers
 * the timer either way: its version, read just before, tells the two apart (the page's may be stale).
 */
async function act(key: string, action: Exclude<Action, 'cancel'>): Promise<string> {
  const before = action === 'trigger' ? undefined : (await api<Timer>('GET', timerPath(key))).version;
  const answer = await api<Timer>('POST', timerPath(key, action));
  if (answer.version !== before) return `${key}: ${DONE[action]}.`;
  return `${key} was ${action === 'pause' ? 'already paused' : 'not paused'}: nothing changed.`;
}

/** Each action is offered when the timer's status allows it; the API still has the last word. */
function actions(timer: Timer, rerender: () => void): HTMLElement {
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
        // cancelled; or, since the page was read, it ended (its kept row removed) or was cancelled already
        const said = await cancelTimer(timer.key);
        // to the list first: the notice is the list's (notice.ts)
        location.hash = '#/';
        notify(said);
        return;
      }
      notify(await act(timer.key, action));
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
          onclick: () => void run(action),
        },
        labels[action],
      ),
    ),
    againButton(timer, rerender),
    h('button', { type: 'button', onclick: rerender }, 'Refresh'),
  );
}

function fields(timer: Timer): HTMLElement {
  const rows: [string, string][] = [
    ['Status', timer.status],
    ['Kind', timer.kind],
    ['Schedule', schedule(timer)],
    ['Handler', timer.handler],
    [
      'Due',
      timer.status === 'pending'
        ? `${formatTime(timer.dueAt)} (${relative(timer.dueAt)})`
        : formatTime(timer.dueAt),
    ],
    ['Runs', timer.maxRuns === undefined ? String(timer.runCount) : `${timer.runCount} of ${timer.maxRuns}`],
    ['Last run', lastRun(timer)],
    ['Last fired', formatTime(timer.lastFiredAt)],
    ['Last completed', formatTime(timer.lastCompletedAt)],
    [
      'Last error',
      timer.last?.error
        ? `${formatTime(timer.lastErrorAt)}: ${timer.last.error.message}`
        : formatTime(timer.lastErrorAt),
    ],
    ['Delivery', timer.delivery],
    ['Scheduled at', formatTime(timer.scheduledAt)],
    ['Id, version', `${timer.id}, v${timer.version}`],
  ];
  if (timer.delayMs !== undefined) rows.splice(3, 0, ['Delay', durationText(timer.delayMs)]);
  if (timer.timeout !== undefined) rows.splice(-3, 0, ['Timeout', `${durationText(timer.timeout)} a run`]);
  return h(
    'dl',
    { class: 'fields' },
    ...rows.flatMap(([name, value]) => [h('dt', {}, name), h('dd', {}, value)]),
  );
}

/** Payloads can hold personal data: they are put on screen only on request, and removed again. */
function payloadToggle(timer: Timer): HTMLElement {
  const shown = h('div', { id: 'payload' });
  const button = h(
    'button',
    { type: 'button', 'aria-expanded': 'false', 'aria-controls': 'payload' },
    'Show payload',
  );
  button.addEventListener('click', () => {
    const open = button.getAttribute('aria-expanded') === 'true';
    button.setAttribute('aria-expanded', String(!open));
    button.textContent = open ? 'Show payload' : 'Hide payload';
    shown.replaceChildren(
      ...(open
        ? []
        : [
            h('h3', {}, 'Payload'),
            h('pre', {}, JSON.stringify(timer.payload, null, 2)),
            ...(timer.meta === undefined
              ? []
              : [h('h3', {}, 'Meta'), h('pre', {}, JSON.stringify(timer.meta, null, 2))]),
          ]),
    );
  });
  return h('div', {}, h('p', {}, button), shown);
}

function nextTimes({ key, status }: Timer): HTMLElement {
  return loaded(api<NextTimes>('GET', timerPath(key, 'next'), { count: String(NEXT_COUNT) }), ({ times }) =>
    times.length
      ? table<NextTimes['times'][number]>(
          times.length === 1 ? 'The next due time' : `The next ${times.length} due times`,
          [
            ['When', (t) => formatTime(t.at)],
            ['Zone offset', (t) => t.offset],
            ['In', (t) => relative(Date.parse(t.at))],
          ],
          times,
        )
      : h('p', {}, noTimes(status)),
  );
}

/**
 * Why a timer has no due time (docs/spec.md §3.9: none while paused or finished), as `sundial next` says
 * it: a paused one runs again once resumed, which "will not run again" would deny.
 */
function noTimes(status: Timer['status']): string {
  if (status === 'paused')
    return 'No due times while it is paused: press Resume to run it on its schedule again.';
  return 'No more due times: the timer will not run again on its schedule.';
}

function ledger(key: string): HTMLElement {
  return loaded(
    api<{ entries: LedgerEntry[] }>('GET', timerPath(key, 'history'), { limit: String(LEDGER_LIMIT) }),
    ({ entries }) => (entries.length ? ledgerTable(entries) : h('p', {}, 'The ledger is empty.')),
  );
}

/**
 * The Ledger of a key with no timer: a timer removed when it ended (a one-shot after its run, by default)
 * keeps its history for 7 days, as the not-found fix says; nothing is shown for a key without one.
 */
function endedLedger(key: string): HTMLElement {
  const container = h('div', {});
  void api<{ entries: LedgerEntry[] }>('GET', timerPath(key, 'history'), {
    limit: String(LEDGER_LIMIT),
  }).then(
    ({ entries }) => {
      if (entries.length) container.replaceChildren(h('h2', {}, 'Ledger'), ledgerTable(entries));
    },
    () => undefined, // no history either: the refusal above says what to do
  );
  return container;
}

function ledgerTable(entries: LedgerEntry[]): HTMLElement {
  return table<LedgerEntry>(
    entries.length === 1 ? 'The only entry' : `The last ${entries.length} entries, newest first`,
    [
      ['At', (e) => formatTime(e.at)],
      ['Event', (e) => e.event],
      ['Version', (e) => String(e.version)],
      ['Worker', (e) => e.workerId ?? '—'],
      ['Detail', (e) => detail(e)],
    ],
    entries,
  );
}

function detail(entry: LedgerEntry): string {
  const parts = [
    entry.reason && `reason ${entry.reason}`,
    // a failed run that ended its timer: why it ended (a completed one says it in its reason)
    entry.ended && `ended ${entry.ended}`,
    entry.message,
    entry.count !== undefined && `count ${entry.count}`,
    entry.attempt !== undefined && `attempt ${entry.attempt}`,
    entry.due && `due ${formatTime(entry.due)}`,
  ];
  return parts.filter(Boolean).join(' · ') || '—';
}

/** A section filled in when its request answers; a refusal shows in place (e.g. a ledger turned off). */
function loaded<T>(request: Promise<T>, render: (value: T) => HTMLElement): HTMLElement {
  const container = h('div', {}, h('p', {}, 'Loading…'));
  request.then(
    (value) => container.replaceChildren(render(value)),
    (error: unknown) => container.replaceChildren(h('p', {}, `Not available: ${describeError(error)}`)),
  );
  return container;
}
