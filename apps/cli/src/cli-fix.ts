// The module itself, not @sundial/core's index: that loads the whole engine (and needs the path
// mapping) at every invocation, for one function.
import { keyNotFoundFix, type KeyFixWays } from '../../../libs/core/src/browser/key-fix';
import type { ErrorFields } from './cli-error';

/** What the CLI knows about a refused request, to phrase its fix. */
export interface RefusalContext {
  status: number;
  /** SUNDIAL_URL, as used */
  url: string;
  /** whether SUNDIAL_TOKEN was set */
  withToken: boolean;
  /** the timer the command was about, when it names one */
  key?: string;
}

/**
 * The API's fix in the CLI's terms (docs/spec.md §5.6): the API names its routes, headers, body fields
 * and calls (`GET /v1/timers?prefix=`, `Idempotency-Key`, `ifExists: 'replace'`); a CLI user runs
 * commands with flags. A fix with nothing of the kind in it is kept as the API wrote it.
 */
export function cliFix(error: Partial<ErrorFields>, context: RefusalContext): string | undefined {
  const key = context.key === undefined ? '<key>' : keyArgument(context.key);
  if (context.status === 401) {
    return `${context.withToken ? "SUNDIAL_TOKEN is not the scheduler's token: set" : 'Set'} SUNDIAL_TOKEN to the scheduler's SUNDIAL_API_TOKEN.`;
  }
  switch (error.reason) {
    case 'not-found':
      return error.field === 'key'
        ? keyNotFoundFix(
            context.key,
            { ...COMMANDS, again: `sundial again ${key}` },
            error.detail?.code,
            error.detail?.status,
          )
        : // no such route: SUNDIAL_URL is not a scheduler's root, or the scheduler is older than the CLI
          `Check that SUNDIAL_URL (${context.url}) is the root of a Sundial scheduler of this version.`;
    case 'duplicate-key':
      // a batch file naming a key twice: no timer to cancel
      if (error.detail?.code === 'repeated-key') {
        return 'Give each spec of the file its own key, or drop one of the two; to have the later supersede the earlier, give it "ifExists": "replace" in the file (--if-exists replace sets it on every spec).';
      }
      return `Add --if-exists replace to supersede it, or --if-exists keep to get it back; or run sundial cancel ${key} first.`;
    case 'inactive':
      return inactiveFix(error, key);
    case 'idempotency-conflict':
      return 'Run it again with exactly the same arguments, or pass a new --idempotency-key for a new request.';
    case 'invalid':
      return invalidFix(error, key);
    case 'unavailable':
      // a write cut off after it was sent (refusals.outcomeUnknown): it may have been applied
      return error.detail?.code === 'outcome-unknown'
        ? 'Run the same command again with the same --idempotency-key: a repeat changes nothing more. ' +
            `Without one, check with sundial get ${key} before running it again.`
        : error.fix;
    default:
      return error.fix;
  }
}

/**
 * The API's message where it names what the CLI user did not see: a refused cursor is told over HTTP as a
 * `GET /v1/timers` page's; the CLI user had it from a page's `more:` line. Undefined: the API's message.
 */
export function cliMessage(error: Partial<ErrorFields>): string | undefined {
  if (error.reason !== 'invalid' || error.field !== 'cursor') return undefined;
  return error.detail?.code === 'cursor-other-list'
    ? '--cursor was printed by a list of another --prefix, --status or --due-before'
    : '--cursor is not one a sundial list page printed';
}

/**
 * The fields whose fix names an API parameter or call rather than the flag (a spec's fields are
 * named as the flags are, camelCase for kebab-case: those fixes are kept).
 */
function invalidFix(error: Partial<ErrorFields>, key: string): string | undefined {
  switch (error.field) {
    case 'Idempotency-Key':
      return 'Pass --idempotency-key 1 to 255 printable ASCII characters without spaces, e.g. a UUID (uuidgen).';
    case 'dueBefore':
      return "Write --due-before as an ISO instant (e.g. 2026-03-01T09:00:00Z), epoch ms, or +<n>s|m|h|d after the scheduler's now (-<n>s|m|h|d before it).";
    case 'status':
      return error.detail?.code === 'due-before-status'
        ? 'Leave out --status (or pass --status pending) with --due-before.'
        : error.fix;
    case 'limit':
    case 'count':
      // `Pass e.g. limit: 100.`, `Pass count between 1 and 100, …`: the query parameter is the flag
      return error.fix?.replace(new RegExp(`\\b${error.field}:? `, 'g'), `--${error.field} `);
    case 'cursor':
      return error.detail?.code === 'cursor-other-list'
        ? 'Run the "more:" line the page that printed this --cursor ended with: its --prefix, --status and --due-before go with it. Or leave --cursor out to start over.'
        : 'Pass the --cursor a previous page printed (its "more:" line), or leave it out to start over.';
    case 'key':
      return error.detail?.code === 'one-shot'
        ? `Backfill an every or cron timer, or run sundial trigger ${key} to run a one-shot timer now.`
        : error.fix;
    default:
      return error.fix;
  }
}

/** running: wait, or replace it; paused: resume it. The status is the one the refusal met (`detail`). */
function inactiveFix(error: Partial<ErrorFields>, key: string): string | undefined {
  const status = error.detail?.status;
  if (status === 'paused') return `Run sundial resume ${key} first.`;
  if (status === 'running') {
    return `Wait for the run to end (sundial get ${key} shows its status), or schedule it again with --if-exists replace to supersede the running work.`;
  }
  return error.fix;
}

/**
 * A not-found key's ways on the command line: `sundial list --prefix <the key's scope>`, `sundial history`
 * (and `sundial again <key>`, added where the key is known: cliFix).
 */
const COMMANDS: KeyFixWays = {
  list: (scope) => (scope === '' ? 'sundial list' : `sundial list ${optionArgument('prefix', scope)}`),
  history: (key) => `sundial history ${key === undefined ? '<key>' : keyArgument(key)}`,
  kept: '--remove-on-complete false',
};

/** A word as a shell takes it: as it is when it is plain, else single-quoted. */
export function shellWord(value: string): string {
  return /^[\w:.,+@/-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}

/** A key as a command's argument: after `--` where the CLI would read it as an option (`--json`, `-h`). */
export function keyArgument(key: string): string {
  return key.startsWith('--') || key === '-h' ? `-- ${shellWord(key)}` : shellWord(key);
}

/** `--name value`, or `--name=value` for a value the CLI would read as the next option (`--prefix=--x:`). */
export function optionArgument(name: string, value: string): string {
  return value.startsWith('--') ? `--${name}=${shellWord(value)}` : `--${name} ${shellWord(value)}`;
}
