import { readFileSync } from 'node:fs';
import type { ParsedArgs } from './args';
import { usageError } from './cli-error';

/** Options of `schedule`/`preview` that are the CLI's own, not TimerSpec fields. */
const CLI_OPTIONS = new Set(['json', 'file', 'count', 'idempotency-key']);
/** TimerSpec fields that are always text, even when they look like a number (`--key 42`). */
const TEXT_FIELDS = new Set(['key', 'handler', 'cron', 'tz', 'ifExists', 'delivery']);

/**
 * A TimerSpec from `--file spec.json` (optional), then one field per other option: `--max-runs 3` sets
 * `maxRuns`. A value that reads as JSON (a number, true/false/null, an object or array) is that value,
 * anything else is text — `--delay 5s` is "5s", `--delay 5000` is 5000, `--payload '{"a":1}'` an
 * object. The scheduler validates the result and names the field it refuses.
 */
export function specFromArgs(args: ParsedArgs, usage: string): Record<string, unknown> {
  if (args.positionals.length) {
    throw usageError(`unexpected argument "${args.positionals[0]}"`, `Usage: ${usage}`);
  }
  const file = args.options.get('file');
  const spec = typeof file === 'string' ? readSpecFile(file) : {};
  for (const [name, value] of args.options) {
    if (CLI_OPTIONS.has(name)) continue;
    const field = name.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
    spec[field] = value === true ? true : TEXT_FIELDS.has(field) ? value : jsonOrText(value);
  }
  if (Object.keys(spec).length === 0) {
    throw usageError('no timer spec given', `Usage: ${usage}`);
  }
  return spec;
}

function jsonOrText(value: string): unknown {
  if (!/^\s*([{["\d-]|true|false|null)/.test(value)) return value;
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

function readSpecFile(path: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path === '-' ? 0 : path, 'utf8');
  } catch (error) {
    throw usageError(
      `cannot read ${path}: ${(error as Error).message}`,
      'Pass --file <path to a JSON TimerSpec> (- for stdin).',
    );
  }
  let spec: unknown;
  try {
    spec = JSON.parse(text);
  } catch (error) {
    throw usageError(
      `${path} is not JSON: ${(error as Error).message}`,
      'Write the spec as one JSON object, e.g. {"key":"a","handler":"log","delay":"5s"}.',
    );
  }
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) {
    throw usageError(
      `${path} does not hold a JSON object`,
      'Write the spec as one JSON object (a TimerSpec).',
    );
  }
  return spec as Record<string, unknown>;
}
