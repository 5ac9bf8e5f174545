/**
 * The operator UI (served by the scheduler at /ui): a hash router over three views, and the API
 * token form. Routes: `#/?prefix=&status=` timers, `#/timeline?window=1h|1d`, `#/timer/<key>`.
 */
import { apiToken, setApiToken } from './api.js';
import { h } from './dom.js';
import { browserZone } from './format.js';
import { redrawKeepingFocus } from './keep-focus.js';
import { noteMove } from './last-list.js';
import { clearStaleNotice, notify } from './notice.js';
import { timerView } from './views/timer.js';
import { timelineView } from './views/timeline.js';
import { timersView } from './views/timers.js';

/** Draws the page of the address; a redraw of the same page (`keepFocus`, a view's rerender) keeps focus. */
function route(keepFocus: unknown = true): void {
  const [path, query = ''] = location.hash.replace(/^#/, '').split('?');
  const params = new URLSearchParams(query);
  const main = document.getElementById('main')!;
  let view: HTMLElement;
  if (path.startsWith('/timer/')) view = timerRoute(path.slice('/timer/'.length));
  else if (path === '/timeline') view = timelineView(params, route);
  else view = timersView(params, route);
  if (keepFocus === false) main.replaceChildren(view);
  else redrawKeepingFocus(main, () => main.replaceChildren(view));
  const section = path === '/timeline' ? '#/timeline' : path.startsWith('/timer/') ? null : '#/';
  for (const link of document.querySelectorAll('nav[aria-label="Pages"] a')) {
    if (link.getAttribute('href') === section) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  document.title = `${view.querySelector('h1')?.textContent ?? 'Timers'} · Sundial`;
}

/**
 * A timer's page from its link's encoded key. A link cut short or mangled (`%E0%A4%A`) decodes to no
 * key: before, the decode threw and the previous page stayed on screen under the new address.
 */
function timerRoute(encoded: string): HTMLElement {
  let key: string;
  try {
    key = decodeURIComponent(encoded);
  } catch {
    const message = `invalid: the link's key "${encoded}" is not percent-encoding, so it names no timer.`;
    const fix = 'Fix: Open the timer from the Timers list, or copy its link again whole.';
    notify(`${message} ${fix}`, 'error');
    return h('section', {}, h('h1', {}, 'Not a timer link'), h('p', {}, message, ' ', fix));
  }
  // `.` and `..` no URL can name (docs/spec.md §2): the page asked the route's parent and showed its 404
  if (key === '.' || key === '..') {
    const message = `invalid: the key "${key}" is a URL dot-segment: no API route can name it, so this page cannot show it.`;
    const fix =
      'Fix: No timer is created under . or .. (refused when scheduled); one made before that rule is reachable from code only (get and cancel of the TimersApi).';
    notify(`${message} ${fix}`, 'error');
    return h('section', {}, h('h1', {}, 'Not a timer link'), h('p', {}, message, ' ', fix));
  }
  return timerView(key, route);
}

function tokenForm(): void {
  const form = document.getElementById('token-form') as HTMLFormElement;
  const input = document.getElementById('token') as HTMLInputElement;
  input.value = apiToken() ?? '';
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    setApiToken(input.value.trim() || null);
    notify(input.value.trim() ? 'API token set for this tab.' : 'No API token.');
    route();
  });
  document.getElementById('token-clear')!.addEventListener('click', () => {
    input.value = '';
    setApiToken(null);
    notify('API token forgotten.');
    route();
  });
}

window.addEventListener('hashchange', (event) => {
  // a redraw asked of this page (a Retry's) names no old address: where Cancel goes back to stays
  if (event.oldURL) noteMove(new URL(event.oldURL).hash);
  clearStaleNotice();
  route(false);
  // Move focus to the new page for keyboard and screen-reader users.
  document.getElementById('main')!.focus();
});
document.getElementById('zone')!.textContent = `Times in ${browserZone()}`;
tokenForm();
route();
