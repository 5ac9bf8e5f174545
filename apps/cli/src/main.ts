#!/usr/bin/env node
/**
 * `sundial` — the command line over a Sundial scheduler's HTTP API (SUNDIAL_URL, SUNDIAL_TOKEN), and
 * `repartition` over Redis itself (REDIS_URL, SUNDIAL_PREFIX, SUNDIAL_COMMAND_TIMEOUT_MS).
 * Only the command run is loaded (registry.ts), so an invocation costs little more than node's start.
 * Exit codes: 0 done, 1 refused (reason and fix printed), 2 bad command line,
 * 3 scheduler or Redis unreachable or failing (retrying may help), 130 interrupted (Ctrl-C).
 */
import { parseArgs } from './args';
import { CliError, EXIT, usageError } from './cli-error';
import { DEFAULT_TIMEOUT_MS, DEFAULT_URL, sundialHttp } from './http';
import { EXIT_INTERRUPTED, interruptedText } from './interrupt';
import { createOutput, printable } from './output';
import { type CommandEntry, COMMANDS } from './registry';

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const [name, ...rest] = argv;
  // Read before parsing, for a refusal of the command line itself; after `--` everything is an argument
  // (`sundial cancel -- --json` cancels the key "--json", and answers in text).
  const dashes = rest.indexOf('--');
  const json = (dashes === -1 ? rest : rest.slice(0, dashes)).includes('--json');
  try {
    if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
      process.stdout.write(rest[0] === undefined ? overview() : await usage(findCommand(rest[0])));
      return EXIT.ok;
    }
    const entry = findCommand(name);
    const args = parseArgs(rest);
    if (args.options.get('help') === true) {
      process.stdout.write(await usage(entry));
      return EXIT.ok;
    }
    const command = await entry.load();
    const out = createOutput(json, process.stdout, (text) => process.stderr.write(text));
    await command.run({ args, api: sundialHttp(env), out, env });
    return EXIT.ok;
  } catch (error) {
    const failure = error instanceof CliError ? error : internal(error);
    process.stderr.write(json ? `${JSON.stringify({ error: failure.toJSON() })}\n` : describe(failure));
    return failure.exitCode;
  }
}

function findCommand(name: string): CommandEntry {
  const command = COMMANDS.find((c) => c.name === name);
  if (command) return command;
  throw usageError(
    `unknown command "${name}"`,
    `Run sundial help; commands: ${COMMANDS.map((c) => c.name).join(', ')}.`,
  );
}

function describe(error: CliError): string {
  const where = error.field ? ` (field ${error.field})` : '';
  const status = error.status ? ` [HTTP ${error.status}]` : '';
  const text = `sundial: ${error.reason}${where}: ${error.message}${status}`;
  return `${printable(text)}\nfix: ${printable(error.fix)}\n`;
}

function internal(error: unknown): CliError {
  const message = error instanceof Error ? error.message : String(error);
  return new CliError(
    {
      reason: 'internal',
      message,
      fix: 'This is a bug in the sundial CLI: please report it with the command line.',
    },
    EXIT.unavailable,
  );
}

/** One command's summary and usage: its module is loaded for the usage, the others' are not. */
async function usage(entry: CommandEntry): Promise<string> {
  return `${entry.summary}\n\nusage: ${(await entry.load()).usage}\n`;
}

/** `sundial help`: every command's summary, from the registry alone (no command module is loaded). */
function overview(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    'usage: sundial <command> [arguments] [--json]',
    '',
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    '',
    `Talks to the scheduler at SUNDIAL_URL (default ${DEFAULT_URL}), with SUNDIAL_TOKEN as its API token,`,
    `waiting SUNDIAL_TIMEOUT_MS (default ${DEFAULT_TIMEOUT_MS}) for each answer; repartition talks to Redis`,
    'at REDIS_URL (or --redis-url) under SUNDIAL_PREFIX (or --prefix), waiting SUNDIAL_COMMAND_TIMEOUT_MS',
    "(the apps' setting, and default) for each reply.",
    '--json prints the API answer as JSON (errors as {"error": {...}} on stderr).',
    'Exit codes: 0 done, 1 refused, 2 bad command line, 3 scheduler or Redis unreachable or failing,',
    '130 interrupted (Ctrl-C).',
    "sundial help <command> (or sundial <command> --help) shows a command's usage.",
    '',
  ].join('\n');
}

/**
 * A reader that closes the pipe early (`sundial list --all | head`) makes the next write fail with
 * EPIPE: it took what it wanted, so the command ends quietly (exit 0) rather than crash with a stack.
 */
function endWhenReaderCloses(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
    process.exit(EXIT.ok);
  });
}

if (require.main === module) {
  endWhenReaderCloses(process.stdout);
  endWhenReaderCloses(process.stderr);
  process.once('SIGINT', () => {
    process.stderr.write(interruptedText(process.argv.slice(2)));
    process.exit(EXIT_INTERRUPTED);
  });
  void main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
}
