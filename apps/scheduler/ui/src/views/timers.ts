/**
 * Timers by prefix and status, a page at a time: the server pages (`GET /v1/timers` with its cursor),
 * so a page costs the same with 100 timers or 100k.
 */
import { h, statusBadge, table } from '../dom.js';
import { formatTime, lastRun, relative, schedule } from '../format.js';
import { pagedList } from '../pager.js';
import type { Timer } from '../types.js';
import { cancelPrefixButton } from './cancel-prefix.js';

const STATUSES = ['', 'pending', 'running', 'paused', 'completed', 'failed'];

export function timersView(params: URLSearchParams, rerender: () => void): HTMLElement {
  const prefix = params.get('prefix') ?? '';
  const status = params.get('status') ?? '';
  const list = pagedList({
    query: { prefix, status },
    labels: ['← Previous page', 'Next page →'],
    empty: 'No timers match.',
    render: (items, { first }) => {
      const filter = `${prefix ? ` with prefix “${prefix}”` : ''}${status ? `, ${status}` : ''}`;
      return timerTable(`Timers ${first}–${first + items.length - 1}${filter}, by key`, items);
    },
  });
  // Acts on the searched prefix (the one in the URL), whatever the status filter: every live timer of it.
  // Refresh lists again from the first page: a cancel cut off in flight says to press it (ui-fix.ts).
  const bulk = h(
    'div',
    { class: 'actions', role: 'group', 'aria-label': 'Actions on the prefix' },
    cancelPrefixButton(prefix, rerender),
    h('button', { type: 'button', onclick: rerender }, 'Refresh'),
  );
  return h('section', {}, h('h1', {}, 'Timers'), filters(prefix, status), bulk, list);
}

/** The search form: it writes the filters into the URL, so a filtered list can be bookmarked. */
function filters(prefix: string, status: string): HTMLElement {
  const form = h(
    'form',
    { class: 'filters', role: 'search' },
    h(
      'label',
      {},
      'Key prefix',
      h('input', { type: 'search', name: 'prefix', value: prefix, placeholder: 'e.g. invoice:' }),
    ),
    h(
      'label',
      {},
      'Status',
      h(
        'select',
        { name: 'status' },
        ...STATUSES.map((s) => h('option', { value: s, selected: s === status }, s || 'any')),
      ),
    ),
    h('button', { type: 'submit' }, 'Search'),
  ) as HTMLFormElement;
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const data = new FormData(form);
    const query = new URLSearchParams();
    for (const name of ['prefix', 'status']) {
      const value = String(data.get(name) ?? '').trim();
      if (value) query.set(name, value);
    }
    location.hash = `#/?${query}`;
  });
  return form;
}

export function timerLink(key: string): HTMLElement {
  return h('a', { href: `#/timer/${encodeURIComponent(key)}` }, key);
}

function timerTable(caption: string, timers: Timer[]): HTMLElement {
  return table<Timer>(
    caption,
    [
      ['Key', (t) => timerLink(t.key)],
      ['Status', (t) => statusBadge(t.status)],
      ['Schedule', (t) => schedule(t)],
      ['Handler', (t) => t.handler],
      ['Due', (t) => (t.status === 'pending' ? `${formatTime(t.dueAt)} (${relative(t.dueAt)})` : '—')],
      ['Runs', (t) => String(t.runCount)],
      ['Last run', (t) => lastRun(t)],
    ],
    timers,
  );
}
