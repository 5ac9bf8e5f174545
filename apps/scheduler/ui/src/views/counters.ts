/**
 * A timer's counters, as `describe` answers them (docs/spec.md §3.9): how many runs, failures, stale
 * refusals, skipped slots and lost or requeued runs it had. Only Runs is exact (the row's `runCount`);
 * the others are counted over the ledger's kept entries, which the page says where it shows them.
 */
import { h, table } from '../dom.js';
import type { TimerCounters } from '../types.js';

type Counter = [name: string, field: keyof TimerCounters, meaning: string];

/** Each counter's label and what it counts, in the spec's words (§3.9, §6.1). */
const COUNTERS: Counter[] = [
  ['Runs', 'runs', "runs started (the row's runCount: every run, exact)"],
  ['Failures', 'failures', 'runs that failed (failed entries)'],
  ['Stale', 'stale', 'fire jobs or completions refused as no longer matching this timer (stale entries)'],
  ['Skipped', 'skipped', 'slots gone past unrun, missed or during a run (the count of skipped entries)'],
  ['Lost', 'lost', "at-most-once runs whose worker's lease ran out, recorded failed (lost entries)"],
  ['Requeued', 'requeued', 'at-least-once runs whose worker was lost, put back to run again'],
];

/**
 * The counters' table and, under it, the limit of those derived from the ledger: a long-lived timer's
 * older entries are trimmed, and an earlier timer of the key is not counted, so they can be partial.
 */
export function countersView(counters: TimerCounters, ledgerLimit: number): HTMLElement {
  const noteId = 'counters-note';
  const view = table<Counter>(
    'Counters of this timer',
    [
      ['Counter', ([name]) => name],
      ['Count', ([, field]) => String(counters[field])],
      ['What it counts', ([, , meaning]) => meaning],
    ],
    COUNTERS,
  );
  view.querySelector('table')?.setAttribute('aria-describedby', noteId);
  return h(
    'div',
    {},
    view,
    h(
      'p',
      { id: noteId, class: 'muted' },
      `Runs is the row's own count. The others are counted over the ledger's last ${ledgerLimit} entries, ` +
        "not the timer's whole life: a long-lived timer's older entries have been trimmed, and none are " +
        "counted with the ledger turned off. Only this timer's own are counted: entries older than its " +
        'newest "scheduled" (an earlier timer of the key) and stale "gone" ones are in the Ledger but not counted.',
    ),
  );
}
