/**
 * Cancelling every live timer of a key prefix (`DELETE /v1/timers?prefix=`), guarded: the button acts
 * on the prefix the list was searched with, an empty prefix is refused here as the API refuses it (an
 * empty one never means "all": cancelling every timer stays a CLI act, `sundial cancel --all`), and
 * the confirmation names how many live timers it will cancel, counted just before.
 */
import { api } from '../api.js';
import { h } from '../dom.js';
import { notify, notifyError } from '../notice.js';
import { oneAtATime } from '../one-at-a-time.js';
import type { ListResult } from '../types.js';

const LIVE = new Set(['pending', 'running', 'paused']);
/** the API's largest page */
const COUNT_PAGE = 1000;
/**
 * The count reads at most this many pages (10,000 timers): a prefix of 100,000 would otherwise load every
 * one into the page (100 reads, tens of MB) before the question is even asked. Past it the question
 * says the count is a lower bound; the answer to the cancel is the exact number.
 */
const COUNT_PAGES = 10;

export function cancelPrefixButton(prefix: string, after: () => void): HTMLElement {
  // a second press while the first counts or cancels sends nothing (one-at-a-time.ts): it asked twice, and
  // its "Cancelled 0 timers" replaced the first's count
  const guard = oneAtATime();
  return h(
    'button',
    { type: 'button', class: 'danger', onclick: () => void guard(() => cancelPrefix(prefix, after)) },
    'Cancel timers with this prefix…',
  );
}

async function cancelPrefix(prefix: string, after: () => void): Promise<void> {
  if (prefix === '') {
    notify(
      'invalid: Cancelling by prefix needs a non-empty key prefix; an empty one does not mean all. ' +
        'Fix: Enter a key prefix above and press Search, then cancel the timers it lists.',
      'error',
    );
    return;
  }
  try {
    const { live: count, ended, more } = await countUnder(prefix);
    if (count === 0 && !more) {
      notify(`No live timer has a key starting with “${prefix}”: nothing to cancel.`);
      return;
    }
    const listed = (COUNT_PAGE * COUNT_PAGES).toLocaleString('en');
    const what = more
      ? `${count.toLocaleString('en')} or more live timers (counted among the first ${listed} listed)`
      : count === 1
        ? '1 live timer'
        : `${count} live timers`;
    // the API deletes the ended rows kept under the scope too (§3.4): a failed one the operator came
    // to look at would be gone without a word
    const kept = more
      ? ` Ended timers kept under it (completed or failed${ended > 0 ? `: ${ended.toLocaleString('en')} or more` : ', if any'}) will be deleted too.`
      : ended === 0
        ? ''
        : ` ${ended === 1 ? 'The ended timer' : `The ${ended} ended timers`} kept under it (completed or failed) will be deleted too.`;
    if (!confirm(`Cancel ${what} whose key starts with “${prefix}”? They will not run again.${kept}`)) return;
    const { cancelled } = await api<{ cancelled: number }>('DELETE', 'timers', { prefix });
    notify(`Cancelled ${cancelled} ${cancelled === 1 ? 'timer' : 'timers'} with prefix “${prefix}”.`);
    after();
  } catch (error) {
    notifyError(error);
  }
}

/**
 * The live timers under `prefix` now, and the ended ones kept there (removeOnComplete false), read from
 * at most COUNT_PAGES pages; `more`: the list goes on past them.
 */
async function countUnder(prefix: string): Promise<{ live: number; ended: number; more: boolean }> {
  let live = 0;
  let all = 0;
  let cursor = '';
  for (let pages = 0; pages < COUNT_PAGES; pages++) {
    const page = await api<ListResult>('GET', 'timers', { prefix, limit: String(COUNT_PAGE), cursor });
    live += page.items.filter((timer) => LIVE.has(timer.status)).length;
    all += page.items.length;
    cursor = page.nextCursor ?? '';
    if (!cursor) return { live, ended: all - live, more: false };
  }
  return { live, ended: all - live, more: true };
}
