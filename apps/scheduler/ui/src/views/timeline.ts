/**
 * What fires in the next hour or day: `GET /v1/timers?dueBefore=` lists the pending timers due by then
 * in due order, a page at a time (the server merges each partition's due index; docs/spec.md §3.6).
 * A periodic timer shows its next run; its later times are on its own page.
 */
import { serverNow } from '../api.js';
import { h, table } from '../dom.js';
import { formatTime, relative, schedule } from '../format.js';
import { pagedList } from '../pager.js';
import type { Timer } from '../types.js';
import { timerLink } from './timers.js';

const WINDOWS: Record<string, [number, string]> = {
  '1h': [3_600_000, 'next hour'],
  '1d': [86_400_000, 'next day'],
};

/**
 * `rerender` (Refresh) draws it again from the scheduler's now: the window and the list are those of the
 * moment the page was drawn, and on-call leaves it open — before, nothing on the page read it again (the
 * window's link names the page already shown), so a timer that had fired stayed "in 3 min" and one
 * scheduled since never showed.
 */
export function timelineView(params: URLSearchParams, rerender: () => void): HTMLElement {
  const window = params.get('window') ?? '';
  const chosen = window in WINDOWS ? window : '1h';
  const [span, label] = WINDOWS[chosen];
  const due = h('div', {}, h('p', {}, 'Loading…'));
  // the window from the scheduler's now (its clock is the due times'), once for all its pages
  void serverNow().then((now) => {
    const dueBefore = now + span;
    const list = pagedList({
      query: { dueBefore: String(dueBefore), prefix: params.get('prefix') ?? '' },
      labels: ['← Earlier', 'Later →'],
      empty: `Nothing is due in the ${label}.`,
      render: (items, { first }) =>
        dueTable(`Due in the ${label}, soonest first: ${first}–${first + items.length - 1}`, items),
    });
    due.replaceChildren(
      h(
        'p',
        { class: 'muted' },
        `Pending timers due before ${formatTime(dueBefore)}. Periodic timers show their next run; a timer's page lists its next times.`,
      ),
      list,
    );
  });
  return h(
    'section',
    {},
    h('h1', {}, `Timeline: the ${label}`),
    h(
      'nav',
      { 'aria-label': 'Window', class: 'filters' },
      ...Object.entries(WINDOWS).map(([name, [, text]]) =>
        h('a', { href: `#/timeline?window=${name}`, 'aria-current': name === chosen ? 'page' : false }, text),
      ),
      h('button', { type: 'button', onclick: rerender }, 'Refresh'),
    ),
    due,
  );
}

function dueTable(caption: string, timers: Timer[]): HTMLElement {
  return table<Timer>(
    caption,
    [
      ['Due', (t) => formatTime(t.dueAt)],
      ['In', (t) => relative(t.dueAt)],
      ['Key', (t) => timerLink(t.key)],
      ['Handler', (t) => t.handler],
      ['Schedule', (t) => schedule(t)],
    ],
    timers,
  );
}
