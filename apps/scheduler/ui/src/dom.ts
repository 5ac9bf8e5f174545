/**
 * Building DOM nodes: text always goes through text nodes (never innerHTML), so a key, a handler name
 * or a payload can hold anything without becoming markup.
 */

type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | boolean | ((event: Event) => void)>;

export function h(tag: string, attributes: Attributes = {}, ...children: Child[]): HTMLElement {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) element.setAttribute(name, '');
    else if (value !== false) element.setAttribute(name, value);
  }
  for (const child of children) {
    if (child !== null && child !== undefined && child !== false) {
      element.append(child instanceof Node ? child : String(child));
    }
  }
  return element;
}

/**
 * A table with a caption, column headers (scope=col) and one row per item, in a box that scrolls it
 * sideways when the window is narrower than the table (a phone), so the page itself keeps its width.
 */
export function table<T>(caption: string, columns: [string, (item: T) => Child][], items: T[]): HTMLElement {
  return h('div', { class: 'table-scroll' }, rows(caption, columns, items));
}

function rows<T>(caption: string, columns: [string, (item: T) => Child][], items: T[]): HTMLElement {
  return h(
    'table',
    {},
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, ...columns.map(([name]) => h('th', { scope: 'col' }, name)))),
    h(
      'tbody',
      {},
      ...items.map((item) =>
        h(
          'tr',
          {},
          ...columns.map(([name, cell]) => h('td', { class: name === 'Key' ? 'key' : '' }, cell(item))),
        ),
      ),
    ),
  );
}

export function statusBadge(status: string): HTMLElement {
  return h('span', { class: `status status-${status}` }, status);
}
