import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The Lua commands live next to this file (`commands/*.lua`, their includes in `commands/includes/`);
 * the build copies them into dist, so resolving from __dirname works under ts-jest (source) and from the
 * compiled output alike.
 */
export const COMMANDS_DIR = join(__dirname, 'commands');

/** `--- @include "includes/<name>"` (BullMQ's convention): the include's text goes there, once per script. */
const INCLUDE = /^--- @include "([^"]+)"\s*$/gm;
/**
 * The include of repeated calls (docs/design.md "Repeated calls"): a script that includes it runs its
 * body inside `with_request`, which may answer a repeated request with its first reply instead.
 */
const REQUESTS = 'includes/requests';
/** The layout fence (docs/design.md "Repartition"): first in every script, it may refuse a store write. */
const LAYOUT_FENCE = 'includes/layout-fence';

/**
 * Every script's line after the layout fence: ARGV[2] is the ledger's size (entries kept per key, 0 =
 * none), put there by `runScript` and taken off before the script reads its arguments, so each script's
 * ARGV stays as its header says (includes/ledger.lua reads LEDGER_SIZE). EVAL's form declares it
 * `local` there; a function library declares it at its top level and assigns it per call.
 */
export const LEDGER_PREAMBLE = 'LEDGER_SIZE = tonumber(table.remove(ARGV, 2))';

/**
 * A script's parts, each with its includes inlined: the layout fence (`fence`, first on every call, the
 * ledger preamble after it), the requests include (`requests`: '' for a script without it; else its body
 * runs inside `with_request`), the other includes' functions and tables (`includes`), and the script's
 * own `body`.
 */
export interface ScriptParts {
  fence: string;
  requests: string;
  includes: string;
  body: string;
}

export function scriptParts(script: string): ScriptParts {
  const source = readLua(script);
  const seen = new Set<string>();
  const requests = source.includes(`--- @include "${REQUESTS}"`)
    ? withIncludes(`--- @include "${REQUESTS}"`, seen)
    : '';
  // the include lines come first in every script: they become `includes`, the rest is the body
  const includes = withIncludes((source.match(INCLUDE) ?? []).join('\n'), seen);
  return { fence: readLua(LAYOUT_FENCE), requests, includes, body: source.replace(INCLUDE, '') };
}

/**
 * A script as EVAL runs it: its includes inlined after the layout fence and the ledger preamble; with the
 * requests include, its body and other includes wrapped in `with_request` (the request it leaves stays
 * outside: the body's locals, the includes' functions among them, stay locals of the body).
 */
export function assembleScript(script: string): string {
  const { fence, requests, includes, body } = scriptParts(script);
  const head = `${fence}\nlocal ${LEDGER_PREAMBLE}\n`;
  if (!requests) return withoutUnusedFunctions(`${head}${includes}\n${body}`);
  return withoutUnusedFunctions(
    `${head}${requests}\nlocal function command_body()\n${includes}\n${body}\nend\nreturn with_request('${script}', command_body)\n`,
  );
}

function readLua(name: string): string {
  return readFileSync(join(COMMANDS_DIR, `${name}.lua`), 'utf8');
}

/** Inlines each include at its first mention (an include's own includes first); later mentions go. */
function withIncludes(lua: string, seen: Set<string>): string {
  return lua.replace(INCLUDE, (_line, include: string) => {
    if (seen.has(include)) return '';
    seen.add(include);
    return withIncludes(readLua(include), seen);
  });
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
export function withoutUnusedFunctions(lua: string): string {
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
