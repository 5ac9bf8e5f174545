/**
 * A list the server pages through its cursor: the cursors of the pages seen are kept, so "previous"
 * costs one request like "next", and nothing but the page on screen is held.
 */
import { redrawKeepingFocus } from './keep-focus.js';
import { api } from './api.js';
import { h } from './dom.js';
import { readAt } from './format.js';
import { clearReadError, notifyReadError } from './notice.js';
import type { ListResult, Timer } from './types.js';

export const PAGE_SIZE = 100;

/** A page can come back empty with a cursor: the server reads a bounded stretch of timers per page. */
const STRETCH =
  'No match in this stretch: the server reads at most 10,000 timers per page when filtering. Next reads on.';

export interface PagedList {
  /** `GET /v1/timers` query without limit and cursor */
  query: Record<string, string>;
  /** the page's table; `first` is the position of its first item in the whole list (1-based) */
  render(items: Timer[], where: { page: number; first: number }): HTMLElement;
  /** what an empty first page says */
  empty: string;
  labels: [previous: string, next: string];
}

export function pagedList({ query, render, empty, labels }: PagedList): HTMLElement {
  const container = h('div', {}, h('p', {}, 'Loading…'));
  const cursors: string[] = [''];
  /** how many items the pages before each page held */
  const before: number[] = [0];
  let page = 0;

  const load = async (): Promise<void> => {
    try {
      const result = await api<ListResult>('GET', 'timers', {
        ...query,
        limit: String(PAGE_SIZE),
        cursor: cursors[page],
      });
      clearReadError();
      cursors[page + 1] = result.nextCursor ?? '';
      before[page + 1] = before[page] + result.items.length;
      const [items, buttons] = [
        result.items.length
          ? render(result.items, { page, first: before[page] + 1 })
          : h('p', {}, result.nextCursor ? STRETCH : page ? 'No more timers.' : empty),
        h(
          'div',
          { class: 'pager' },
          h('button', { type: 'button', disabled: page === 0, onclick: () => void go(page - 1) }, labels[0]),
          h(
            'button',
            { type: 'button', disabled: !result.nextCursor, onclick: () => void go(page + 1) },
            labels[1],
          ),
          h('span', { class: 'muted' }, `Page ${page + 1}`),
          h('span', { class: 'muted' }, readAt()),
        ),
      ];
      // Next and Previous keep focus across the page they draw (keep-focus.ts).
      redrawKeepingFocus(container, () => container.replaceChildren(items, buttons));
    } catch (error) {
      notifyReadError(error);
      container.replaceChildren(h('p', {}, 'Could not read the timers.'));
    }
  };
  const go = (to: number): Promise<void> => {
    page = to;
    return load();
  };

  void load();
  return container;
}
