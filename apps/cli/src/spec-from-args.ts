import { readFileSync } from 'node:fs';
import { option, type ParsedArgs } from './args';
import { usageError } from './cli-error';

/** Options of `schedule`/`preview` that are the CLI's own, not TimerSpec fields. */
const CLI_OPTIONS = new Set(['json', 'file', 'count', 'idempotency-key']);
/** TimerSpec fields that are always text, even when they look like a number (`--key 42`). */
const TEXT_FIELDS = new Set(['key', 'handler', 'cron', 'tz', 'ifExists', 'delivery']);

type Spec = Record<string, unknown>;

/**
 * A TimerSpec from `--file spec.json` (optional), then one field per other option: `--max-runs 3` sets
 * `maxRuns`. A value that reads as JSON (a number, true/false/null, an object or array) is that value,
 * anything else is text — `--delay 5s` is "5s", `--delay 5000` is 5000, `--payload '{"a":1}'` an
 * object — except a value starting with `{` or `[` that is not JSON, a usage error. The scheduler
 * validates the result and names the field it refuses. A file holding an array is for `schedule` alone
 * (specsFromArgs): here it is a usage error.
 */
export function specFromArgs(args: ParsedArgs, usage: string): Spec {
  const specs = specsFromArgs(args, usage);
  if (Array.isArray(specs)) {
    throw usageError(
      `${option(args, 'file')} holds an array: this command takes one spec`,
      'Write the file as one JSON object (a TimerSpec); sundial schedule --file takes an array, a batch.',
    );
  }
  return specs;
}

/**
 * specFromArgs, or, when `--file` holds a JSON array, a batch (POST /v1/timers with the array, all or
 * none): each spec of it with the options' fields set (`--if-exists replace` for every one); an element
 * that is not an object is sent as it is, for the scheduler to refuse naming it (`specs[i]`).
 */
export function specsFromArgs(args: ParsedArgs, usage: string): Spec | Spec[] {
  if (args.positionals.length) {
    throw usageError(`unexpected argument "${args.positionals[0]}"`, `Usage: ${usage}`);
  }
  const file = option(args, 'file');
  const read = file === undefined ? {} : readSpecFile(file);
  if (Array.isArray(read)) return read.map((spec) => (isSpec(spec) ? withOptions(spec, args) : spec));
  const spec = withOptions(read, args);
  if (Object.keys(spec).length === 0) {
    throw usageError('no timer spec given', `Usage: ${usage}`);
  }
  return spec;
}

function withOptions(spec: Spec, args: ParsedArgs): Spec {
  const set: Spec = { ...spec };
  for (const [field, name] of flagFields(args)) {
    const value = option(args, name) ?? '';
    set[field] = TEXT_FIELDS.has(field) ? value : jsonOrText(name, value);
  }
  return set;
}

/** The spec fields the options set, each with its option's name: `maxRuns` → `max-runs`. */
export function flagFields(args: ParsedArgs): Map<string, string> {
  const names = [...args.options.keys()].filter((name) => !CLI_OPTIONS.has(name));
  return new Map(
    names.map((name) => [name.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase()), name]),
  );
}

function isSpec(value: unknown): value is Spec {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** JSON when it reads as JSON; text otherwise, except an object or array cut short (a usage error). */
function jsonOrText(name: string, value: string): unknown {
  if (!/^\s*([{["\d-]|true|false|null)/.test(value)) return value;
  try {
    return JSON.parse(value);
  } catch (error) {
    // `--payload '{"a":1'` is a JSON object with a typo, not a text payload that starts with a brace.
    if (/^\s*[{[]/.test(value)) {
      throw usageError(
        `--${name} ${value} is not JSON: ${(error as Error).message}`,
        `Write --${name} as JSON in single quotes, e.g. '{"id":42}'; text starting with { or [ as a JSON string, e.g. '"[note]"'.`,
      );
    }
    return value;
  }
}

function readSpecFile(path: string): Spec | Spec[] {
  let text: string;
  try {
    text = readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (error) {
    throw usageError(
      `cannot read ${path}: ${(error as Error).message}`,
      'Pass --file <path to a JSON TimerSpec, or an array of them> (- for stdin).',
    );
  }
  // stdin with nothing piped in (or an empty file): JSON.parse said "Unexpected end of JSON input"
  if (text.trim() === '') {
    throw usageError(
      `${path === '-' ? 'stdin (--file -)' : path} is empty: there is no spec in it`,
      'Give --file a JSON TimerSpec, e.g. {"key":"a","handler":"log","delay":"5s"}, or an array of them (--file - reads them from stdin: pipe them in).',
    );
  }
  let spec: unknown;
  try {
    spec = JSON.parse(text);
  } catch (error) {
    throw usageError(
      `${path} is not JSON: ${(error as Error).message}`,
      'Write the spec as one JSON object, e.g. {"key":"a","handler":"log","delay":"5s"}, or an array of them.',
    );
  }
  if (!isSpec(spec) && !Array.isArray(spec)) {
    throw usageError(
      `${path} does not hold a JSON object or array`,
      'Write the spec as one JSON object (a TimerSpec), or a batch as an array of them.',
    );
  }
  return spec as Spec | Spec[];
}
