/**
 * The Timers list a timer's page was opened from (`#/?prefix=invoice:029&status=pending`): its Cancel goes
 * back to it. Before, it went to `#/`, every timer unfiltered, and the on-call working through a prefix's
 * timers one by one typed the search again after each cancel. A timer's page reached another way (a link,
 * the timeline) goes back to `#/` as before.
 */
let last = '#/';

/** The page moved from `from` (a hashchange's old address, `#/…`) to another one. */
export function noteMove(from: string): void {
  const path = from.replace(/^#/, '').split('?')[0];
  last = path === '' || path === '/' ? from || '#/' : '#/';
}

export function lastList(): string {
  return last;
}
