/**
 * The API's fix in the UI's terms (docs/spec.md §5.6), as apps/cli/src/cli-fix.ts does for the CLI: the
 * API names its routes, headers and body fields (`GET /v1/timers?prefix=`, `Authorization: Bearer`,
 * `ifExists: 'replace'`); the operator in this page presses buttons and fills fields. A fix with
 * nothing of the kind in it (Redis down, a bad prefix's characters) is kept as the API wrote it.
 */
import type { ApiError } from './api.js';
import { keyNotFoundFix, type KeyFixWays } from './key-fix.js';

export function uiFix(error: ApiError, key?: string): string {
  if (error.status === 401) {
    return "Enter the scheduler's API token (its SUNDIAL_API_TOKEN) in the API token field above and press Use.";
  }
  switch (error.reason) {
    case 'not-found':
      return error.field === 'key'
        ? keyNotFoundFix(key, PAGES, error.detail?.code, error.detail?.status)
        : error.fix;
    case 'duplicate-key':
      // Run again or Schedule again (views/again.ts) met a timer scheduled under the key since the page was drawn
      return 'A live timer now holds this key: press Refresh to see it, and cancel it first to run or schedule the ended one again.';
    case 'inactive':
      return inactiveFix(error);
    case 'invalid':
      return invalidFix(error);
    case 'unavailable':
      // a write cut off after it was sent: it may have been applied
      return error.detail?.code === 'outcome-unknown'
        ? 'Press Refresh to see whether it was applied before doing it again.'
        : error.fix;
    default:
      return error.fix;
  }
}

/** A not-found key's ways in this page: the Timers page searched by the key's scope, the timer's Ledger. */
const PAGES: KeyFixWays = {
  list: (scope) =>
    scope === ''
      ? 'a search of Timers by its key prefix'
      : `a search of Timers for the key prefix “${scope}”`,
  history: (key) =>
    key === undefined
      ? 'the Ledger on its page'
      : `the Ledger on its page (#/timer/${encodeURIComponent(key)})`,
  kept: 'removeOnComplete false',
  again: 'press Run again (a one-shot) or Schedule again (an interval or cron) on its page',
};

/** The list's query fields the operator sets through the search form (a cursor through the pager). */
function invalidFix(error: ApiError): string {
  if (error.field === 'cursor') return 'Press Search again to start from the first page.';
  // Reschedule's one field sends what was typed as `delay` or `at` (views/reschedule.ts)
  if (error.field === 'delay' || error.field === 'at') return dueFieldFix(error.fix);
  if (error.field !== undefined && COPIED.has(error.field.split(/[.[]/)[0]))
    return copiedFix(error.field, error.fix);
  // the API's "Write prefix as …": the field on this page is "Key prefix"
  if (error.field === 'prefix') return error.fix.replace(/^Write prefix as /, 'Enter a Key prefix of ');
  return error.fix;
}

/** The status the refusal met (`detail.status`): paused → Resume; running → wait for the run. */
function inactiveFix(error: ApiError): string {
  if (error.detail?.status === 'paused') return 'Press Resume first.';
  if (error.detail?.status === 'running') {
    return 'Wait for the run to end (Refresh shows its status), then try again.';
  }
  return error.fix;
}

/**
 * The spec fields only Run again and Schedule again send (views/again.ts), copied from the ended timer's row:
 * the API's fix says to write the field otherwise, which this page has no field for. A row stored before a
 * check was added holds a value the API now refuses (a cron's jitter not shorter than its slots' gap).
 */
const COPIED = new Set([
  'handler',
  'payload',
  'meta',
  'every',
  'cron',
  'tz',
  'maxRuns',
  'overlap',
  'retry',
  'pauseAfterFailures',
  'timeout',
  'catchup',
  'catchupWindow',
  'jitter',
  'startAt',
  'endAt',
]);

function copiedFix(field: string, fix: string): string {
  return (
    `This page copies ${field} from the ended timer's row as it is, and the API refuses it now, so it cannot ` +
    `be scheduled again from here. Schedule it anew with another ${field} (sundial schedule, or the HTTP API): ${fix}`
  );
}

/** The API's "Write delay as "1h"." in the page's terms: the New due time field, which takes either form. */
function dueFieldFix(fix: string): string {
  const written = /^Write (?:delay|at) as (.*)$/s.exec(fix);
  return written ? `Enter in New due time ${written[1]}` : `In New due time: ${fix}`;
}
