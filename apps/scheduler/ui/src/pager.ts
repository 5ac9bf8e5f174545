/**
 * A list the server pages through its cursor: the cursors of the pages seen are kept, so "previous"
 * costs one request like "next", and nothing but the page on screen is held.
 */
import { api } from './api.js';
import { h } from './dom.js';
import { notifyError } from './notice.js';
import type { ListResult } from './types.js';

export const PAGE_SIZE = 100;

export interface PagedList {
  /** `GET /v1/timers` query without limit and cursor */
  query: Record<string, string>;
  /** the page's content (a table, or a sentence when the page is empty) */
  render(result: ListResult, page: number): HTMLElement;
  labels: [previous: string, next: string];
}

export function pagedList({ query, render, labels }: PagedList): HTMLElement {
  const container = h('div', {}, h('p', {}, 'Loading…'));
  const cursors: string[] = [''];
  let page = 0;

  const load = async (): Promise<void> => {
    try {
      const result = await api<ListResult>('GET', 'timers', {
        ...query,
        limit: String(PAGE_SIZE),
        cursor: cursors[page],
      });
      cursors[page + 1] = result.nextCursor ?? '';
      container.replaceChildren(
        render(result, page),
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
        ),
      );
    } catch (error) {
      notifyError(error);
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
