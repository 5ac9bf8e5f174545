import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChainableCommander } from 'ioredis';
import type { RedisClient } from '../infra/connection';

/**
 * The Lua commands live next to this file (`commands/*.lua`, their includes in `commands/includes/`);
 * the build copies them into dist, so resolving from __dirname works under ts-jest (source) and from the
 * compiled output alike.
 */
export const COMMANDS_DIR = join(__dirname, 'commands');

/** Every Lua command, by file name without `.lua`. */
export const SCRIPT_NAMES = [
  'backfill',
  'cancel',
  'cancel-all',
  'claim',
  'complete',
  'detach',
  'migrate-ids',
  'pass-late',
  'pause',
  'reconcile',
  'release',
  'renew-leases',
  'repartition-drop',
  'repartition-put',
  'repartition-take',
  'reschedule',
  'resume',
  'schedule',
  'take-due',
  'trigger',
] as const;
export type ScriptName = (typeof SCRIPT_NAMES)[number];

/** `--- @include "includes/<name>"` (BullMQ's convention): the include's text goes there, once per script. */
const INCLUDE = /^--- @include "([^"]+)"\s*$/gm;
/**
 * The include of repeated calls (docs/design.md "Repeated calls"): a script that includes it runs its
 * body inside `with_request`, which may answer a repeated request with its first reply instead.
 */
const REQUESTS = 'includes/requests';
/** The layout fence (docs/design.md "Repartition"): first in every script, it may refuse a store write. */
const LAYOUT_FENCE = 'includes/layout-fence';

export interface LuaCommand {
  /** ioredis command name: `sundial_<file name with - replaced by _>` */
  name: string;
  lua: string;
}

let cached: Map<ScriptName, LuaCommand> | undefined;

/** Reads every command once per process, its includes inlined. */
export function loadCommands(): Map<ScriptName, LuaCommand> {
  if (cached) return cached;
  const files = readdirSync(COMMANDS_DIR).filter((file) => file.endsWith('.lua'));
  const unknown = files.filter((file) => !(SCRIPT_NAMES as readonly string[]).includes(file.slice(0, -4)));
  if (unknown.length > 0) throw new Error(`Lua files without a ScriptName: ${unknown.join(', ')}`);
  cached = new Map();
  for (const script of SCRIPT_NAMES) {
    cached.set(script, { name: commandName(script), lua: assemble(script) });
  }
  return cached;
}

/**
 * Every script's line after the layout fence: ARGV[2] is the ledger's size (entries kept per key, 0 =
 * none), put there by `runScript` and taken off before the script reads its arguments, so each script's
 * ARGV stays as its header says (includes/ledger.lua reads LEDGER_SIZE).
 */
const LEDGER_PREAMBLE = 'local LEDGER_SIZE = tonumber(table.remove(ARGV, 2))\n';

/**
 * A script with its includes inlined, after the layout fence and the ledger preamble; with the requests
 * include, its body wrapped in `with_request`.
 */
function assemble(script: ScriptName): string {
  const source = readFileSync(join(COMMANDS_DIR, `${script}.lua`), 'utf8');
  const fence = readFileSync(join(COMMANDS_DIR, `${LAYOUT_FENCE}.lua`), 'utf8');
  const head = `${fence}\n${LEDGER_PREAMBLE}`;
  if (!source.includes(`--- @include "${REQUESTS}"`))
    return withoutUnusedFunctions(`${head}${withIncludes(source, new Set())}`);
  // with_request (and the request it leaves) stay outside the body; the body becomes a function.
  const requests = withIncludes(readFileSync(join(COMMANDS_DIR, `${REQUESTS}.lua`), 'utf8'), new Set());
  const body = withIncludes(source, new Set([REQUESTS]));
  return withoutUnusedFunctions(
    `${head}${requests}\nlocal function command_body()\n${body}\nend\nreturn with_request('${script}', command_body)\n`,
  );
}

/** A top-level `local function <name>(`; its definition ends at the next line that is `end` alone. */
const LOCAL_FUNCTION = /^local function ([A-Za-z_]\w*)\(/;

/**
 * The script without the top-level local functions it never names (the helpers of an include that other
 * scripts use). Redis runs a script's whole body on every call, so each function defined is a closure
 * made and collected per call: an empty take-due cost ~123k instructions with the 53 functions its
 * includes define, ~108k with the 34 it names. A local function is reached only by its name: one named
 * nowhere outside its own definition never runs. Repeated until none goes (a dropped one may have been
 * the only one naming another); a word in a comment or string counts as naming it.
 */
function withoutUnusedFunctions(lua: string): string {
  let lines = lua.split('\n');
  for (;;) {
    const defined = definitions(lines);
    if (defined.length === 0) return lines.join('\n');
    const word = new RegExp(`\\b(?:${defined.map(({ name }) => name).join('|')})\\b`, 'g');
    const named = lines.map((line) => line.match(word) ?? []);
    const total = countOf(named, 0, named.length - 1);
    const unnamed = defined.filter(
      ({ name, start, end }) => countOf(named, start, end).get(name) === total.get(name),
    );
    if (unnamed.length === 0) return lines.join('\n');
    const gone = new Set(unnamed.flatMap(({ start, end }) => range(start, end)));
    lines = lines.filter((_line, n) => !gone.has(n));
  }
}

/** The top-level local functions of a script: name, first and last line. */
function definitions(lines: readonly string[]): { name: string; start: number; end: number }[] {
  const found: { name: string; start: number; end: number }[] = [];
  for (let start = 0; start < lines.length; start++) {
    const name = LOCAL_FUNCTION.exec(lines[start])?.[1];
    const end = name === undefined ? -1 : lines.indexOf('end', start + 1);
    if (name !== undefined && end > start) found.push({ name, start, end });
  }
  return found;
}

function countOf(named: readonly string[][], first: number, last: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (let n = first; n <= last; n++) {
    for (const name of named[n]) counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return counts;
}

function range(first: number, last: number): number[] {
  return Array.from({ length: last - first + 1 }, (_, i) => first + i);
}

/** Inlines each include at its first mention (an include's own includes first); later mentions go. */
function withIncludes(lua: string, seen: Set<string>): string {
  return lua.replace(INCLUDE, (_line, include: string) => {
    if (seen.has(include)) return '';
    seen.add(include);
    return withIncludes(readFileSync(join(COMMANDS_DIR, `${include}.lua`), 'utf8'), seen);
  });
}

function commandName(script: ScriptName): string {
  return `sundial_${script.replace(/-/g, '_')}`;
}

/** Registers every command on a connection; commands it already has are left as they are. */
export function defineCommands(redis: RedisClient): void {
  for (const command of loadCommands().values()) {
    if (typeof (redis as unknown as Record<string, unknown>)[command.name] === 'function') continue;
    // Every command takes exactly one key, the partition base `P:{pN}:` (docs/design.md).
    redis.defineCommand(command.name, { numberOfKeys: 1, lua: command.lua });
  }
}

type CommandTarget = RedisClient | ChainableCommander;
/** A script argument; an array stands for its elements (ioredis flattens it): a long list is not copied. */
export type ScriptArg = string | number | readonly (string | number)[];
type ScriptFn = (base: string, ...args: ScriptArg[]) => Promise<unknown>;

/**
 * Runs a command on a connection (resolves with the reply) or queues it on a pipeline/multi
 * (the reply arrives with `exec()`). The connection must have gone through `defineCommands`. `argv1` is
 * the script's ARGV[1] (the prefix, maybe with a request); `ledgerSize` travels as ARGV[2] and the
 * script's preamble takes it off (LEDGER_PREAMBLE).
 */
export function runScript(
  target: CommandTarget,
  script: ScriptName,
  base: string,
  ledgerSize: number,
  argv1: string,
  ...args: ScriptArg[]
): Promise<unknown> {
  const fn = (target as unknown as Record<string, ScriptFn | undefined>)[commandName(script)];
  if (typeof fn !== 'function') throw new Error(`Lua command '${script}' is not defined on this connection`);
  return fn.call(target, base, argv1, ledgerSize, ...args);
}
