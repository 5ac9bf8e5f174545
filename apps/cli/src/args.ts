// The module itself, not @sundial/core's index: that loads the whole engine at every invocation.
import { closestName } from '../../../libs/core/src/closest-name';
import { usageError } from './cli-error';

/** A parsed command line: positionals in order, and `--name value` / `--name=value` / `--flag` options. */
export interface ParsedArgs {
  positionals: string[];
  options: Map<string, string | true>;
}

/** Options that never take a value: `--json` is on when given, and `--json=…` is a bad command line. */
const FLAGS = new Set(['json', 'help', 'all', 'show-payload']);

export function parseArgs(argv: string[]): ParsedArgs {
  const positionals: string[] = [];
  const options = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    // after `--` everything is an argument: `sundial cancel -- --json` or `-- -h` names a key
    if (arg === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg === '-h') {
      options.set('help', true);
      continue;
    }
    if (!arg.startsWith('--') || arg === '--') {
      positionals.push(arg);
      continue;
    }
    const [name, inline] = splitOnce(arg.slice(2), '=');
    // `--json=1`, `--all=false`: a flag is on by being there; a value would be dropped unread
    if (inline !== undefined && FLAGS.has(name)) {
      throw usageError(
        `--${name} takes no value (got --${arg.slice(2)})`,
        `Write --${name} alone to turn it on, or leave it out.`,
      );
    }
    if (inline !== undefined) options.set(name, inline);
    else if (FLAGS.has(name)) options.set(name, true);
    // `--prefix --json`: the next option is not this one's value (`--prefix=--json` says it is)
    else if (i + 1 < argv.length && !argv[i + 1].startsWith('--')) options.set(name, argv[++i]);
    // left without a value: the command refuses it as unknown, or as needing one when it reads it
    else options.set(name, true);
  }
  return { positionals, options };
}

function splitOnce(text: string, separator: string): [string, string | undefined] {
  const at = text.indexOf(separator);
  return at === -1 ? [text, undefined] : [text.slice(0, at), text.slice(at + 1)];
}

/** An option's text value; one given without a value is a usage error. */
export function option(args: ParsedArgs, name: string): string | undefined {
  const value = args.options.get(name);
  if (value === true) {
    throw usageError(`--${name} needs a value`, `Write --${name} <value> (or --${name}=<value>).`);
  }
  return value;
}

export function flag(args: ParsedArgs, name: string): boolean {
  return args.options.get(name) === true;
}

/** The command's one positional argument (a timer key), or a usage error that shows the usage. */
export function requireKey(args: ParsedArgs, usage: string): string {
  const [key, ...extra] = args.positionals;
  if (key === undefined) throw usageError('a timer key is required', `Usage: ${usage}`);
  if (extra.length) throw usageError(`unexpected argument "${extra[0]}"`, `Usage: ${usage}`);
  return key;
}

/** Refuses options the command does not know, so a typo is not silently ignored. */
export function onlyOptions(args: ParsedArgs, known: string[], usage: string): void {
  for (const name of args.options.keys()) {
    if (name !== 'json' && !known.includes(name)) {
      // a typo (`--prefx`) names the option meant, as the API names a spec field's
      const guess = closestName(name, known);
      throw usageError(
        `unknown option --${name}`,
        `${guess ? `Did you mean --${guess}? ` : ''}Usage: ${usage}`,
      );
    }
  }
}
