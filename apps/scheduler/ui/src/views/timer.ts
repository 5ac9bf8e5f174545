/**
 * One timer: its fields (the payload and meta only when asked), the actions an operator takes
 * (pause, resume, trigger, cancel), its next times, its counters and its ledger (what happened to it,
 * newest first).
 */
import { api, timerPath } from '../api.js';
import { h, statusBadge, table } from '../dom.js';
import { durationText } from '../duration-text.js';
import { formatInOffset, formatTime, lastRun, readAt, relative, schedule } from '../format.js';
import { lastList } from '../last-list.js';
import { clearReadError, describeError, notifyReadError } from '../notice.js';
import { oneAtATime } from '../one-at-a-time.js';
import type { LedgerEntry, NextTime, Timer, TimerDescription } from '../types.js';
import { actions } from './actions.js';
import { rescheduleForm } from './reschedule.js';
import { ownerNote } from './again.js';
import { countersView } from './counters.js';

const NEXT_COUNT = 10;
const LEDGER_LIMIT = 50;

export function timerView(key: string, rerender: () => void): HTMLElement {
  const section = h('section', {}, h('h1', {}, key), h('p', {}, 'Loading…'));
  void api<Timer>('GET', timerPath(key)).then(
    (timer) => {
      clearReadError();
      section.replaceChildren(...render(timer, rerender));
    },
    (error: unknown) => {
      notifyReadError(error, key);
      section.replaceChildren(
        h('h1', {}, key),
        h('p', {}, describeError(error, key)),
        // `unavailable`'s fix says to retry, and a key scheduled since shows here: Refresh does both
        h(
          'p',
          {},
          h('button', { type: 'button', onclick: rerender }, 'Refresh'),
          ' ',
          // the list it was opened from, with its filters (last-list.ts); it linked every timer, unfiltered
          h('a', { href: lastList() }, lastList() === '#/' ? 'All timers' : 'Back to the list'),
        ),
        endedLedger(key),
      );
    },
  );
  return section;
}

function render(timer: Timer, rerender: () => void): HTMLElement[] {
  // the page's writes, one at a time: a double-click sends one (one-at-a-time.ts)
  const guard = oneAtATime();
  // next times, counters and ledger from one read (two before: next, history), so the counters and the
  // ledger shown agree; the row read before it keeps its own refusal page (no timer: the ended one's ledger)
  const description = api<TimerDescription>('GET', timerPath(timer.key, 'describe'), {
    count: String(NEXT_COUNT),
    limit: String(LEDGER_LIMIT),
  });
  return [
    h('h1', {}, timer.key, ' ', statusBadge(timer.status)),
    h('p', { class: 'muted' }, readAt()),
    actions(timer, rerender, guard),
    ...ownerNote(timer),
    rescheduleForm(timer, rerender, guard),
    h(
      'div',
      { class: 'columns' },
      h('div', {}, h('h2', {}, 'Timer'), fields(timer), payloadToggle(timer)),
      h('div', {}, h('h2', {}, 'Next times'), nextTimes(timer, description)),
    ),
    h('h2', {}, 'Counters'),
    loaded(description, ({ counters }) => countersView(counters, LEDGER_LIMIT)),
    h('h2', {}, 'Ledger'),
    loaded(description, ({ history }) =>
      history.length ? ledgerTable(history) : h('p', {}, 'The ledger is empty.'),
    ),
  ];
}

function fields(timer: Timer): HTMLElement {
  const rows: [string, string][] = [
    ['Status', timer.status],
    ['Kind', timer.kind],
    ['Schedule', schedule(timer)],
    ['Handler', timer.handler],
    ['Due', due(timer)],
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

/**
 * The coming due times in the browser's zone (as every time on the page), and a cron's in its own zone
 * too: the offset `next` answers is the timer's zone's, which beside a browser-zone time read as another
 * instant (09:00 New York shown as `14:00` beside `-05:00` in a London browser).
 */
function nextTimes({ status, kind, tz }: Timer, description: Promise<TimerDescription>): HTMLElement {
  const own: [string, (t: NextTime) => string][] =
    kind === 'cron' ? [[`In the timer's zone (${tz ?? 'UTC'})`, (t) => formatInOffset(t.at, t.offset)]] : [];
  return loaded(description, ({ next: times }) =>
    times.length
      ? table<NextTime>(
          times.length === 1 ? 'The next due time' : `The next ${times.length} due times`,
          [['When', (t) => formatTime(t.at)], ...own, ['In', (t) => relative(Date.parse(t.at))]],
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

/**
 * The Due row: a paused interval's or cron's `dueAt` is not when it runs (a resume arms the next slot after
 * then, docs/spec.md §3.4), and an ended timer's is its last run's: each says so rather than show a time
 * that will not come.
 */
function due(timer: Timer): string {
  const at = formatTime(timer.dueAt);
  switch (timer.status) {
    case 'pending':
      return `${at} (${relative(timer.dueAt)})`;
    case 'paused':
      return timer.kind === 'once'
        ? `${at}, once resumed (at once if it has passed by then)`
        : 'none while paused: once resumed, the next slot after then';
    case 'completed':
    case 'failed':
      return `${at} (its last run's: it will not run again)`;
    default:
      return at;
  }
}

/**
 * A `lost` entry is the settlement of a run whose worker's lease ran out (§3.8, §3.9): reason `requeued`
 * (at-least-once) means it was put back to run again, not lost, as describe's counters count it apart.
 */
const LOST_WORDS: Record<string, string> = {
  requeued: 'reason requeued: put back to run again',
  lost: 'reason lost: recorded lost, not run again',
};

function detail(entry: LedgerEntry): string {
  const parts = [
    entry.reason && ((entry.event === 'lost' && LOST_WORDS[entry.reason]) || `reason ${entry.reason}`),
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
