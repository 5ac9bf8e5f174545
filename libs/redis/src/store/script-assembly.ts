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

/** Each file read once per process: the includes are shared by most of the 20 scripts. */
const texts = new Map<string, string>();

function readLua(name: string): string {
  let text = texts.get(name);
  if (text === undefined) {
    text = readFileSync(join(COMMANDS_DIR, `${name}.lua`), 'utf8');
    texts.set(name, text);
  }
  return text;
}

/** Inlines each include at its first mention (an include's own includes first); later mentions go. */
function withIncludes(lua: string, seen: Set<string>): string {
  return lua.replace(INCLUDE, (_line, include: string) => {
    if (seen.has(include)) return '';
    seen.add(include);
    return withIncludes(readLua(include), seen);
  });
}

/**
 * A top-level `local function <name>(` and an `end` alone, each a whole line (found in the whole text:
 * `(?<=^|\n)`, not the `m` flag, whose `^` and `$` also take a `\r` as a line's end); a definition ends
 * at the next `end` line.
 */
const LOCAL_FUNCTION = /(?<=^|\n)local function ([A-Za-z_]\w*)\(/g;
const END = /(?<=^|\n)end(?=\n|$)/g;

/**
 * The script without the top-level local functions it never names (the helpers of an include that other
 * scripts use). Redis runs a script's whole body on every call, so each function defined is a closure
 * made and collected per call: an empty take-due cost ~123k instructions with the 53 functions its
 * includes define, ~108k with the 34 it names. A local function is reached only by its name: one named
 * nowhere outside its own definition never runs. Repeated until none goes (a dropped one may have been
 * the only one naming another); a word in a comment or string counts as naming it.
 */
export function withoutUnusedFunctions(lua: string): string {
  const texts = lua.split('\n');
  const lineOf = lineFinder(texts);
  // Each line's role found once, in the whole text, by three regexes: a pass then costs what these
  // lines hold, not the ~1,000 lines of a script (matching each line against a `\b(?:<50 names>)\b`
  // alternation on each of ~6 passes was most of a process's start). The names defined shrink from
  // pass to pass, never grow: a pass's names are among the first's.
  const defining = [...lua.matchAll(LOCAL_FUNCTION)].map((match) => ({
    n: lineOf(match.index),
    name: match[1],
  }));
  if (defining.length === 0) return lua;
  let starts = defining.map(({ n }) => n);
  const nameAt = new Map(defining.map(({ n, name }) => [n, name]));
  let ends = [...lua.matchAll(END)].map((match) => lineOf(match.index));
  const word = new RegExp(`\\b(?:${[...new Set(nameAt.values())].join('|')})\\b`, 'g');
  let naming = [...lua.matchAll(word)].map((match) => ({ n: lineOf(match.index), name: match[0] }));
  const kept = texts.map(() => true);
  for (;;) {
    const defined = definitions(starts, ends, nameAt);
    if (defined.length === 0) break;
    const mentions = linesNaming(naming, new Set(defined.map(({ name }) => name)));
    const unnamed = defined.filter(({ name, start, end }) => {
      const lines = mentions.get(name) ?? [];
      return lines.every((n) => n >= start && n <= end);
    });
    if (unnamed.length === 0) break;
    for (const { start, end } of unnamed) kept.fill(false, start, end + 1);
    starts = starts.filter((n) => kept[n]);
    ends = ends.filter((n) => kept[n]);
    naming = naming.filter(({ n }) => kept[n]);
  }
  return texts.filter((_text, n) => kept[n]).join('\n');
}

/** The line of an offset into the text of `texts` joined with '\n', for offsets in ascending order. */
function lineFinder(texts: readonly string[]): (offset: number) => number {
  let line = 0;
  let next = texts[0].length + 1; // where the line after `line` begins
  return (offset) => {
    if (offset < next - texts[line].length - 1) {
      // a new scan of the text: from its first line again
      line = 0;
      next = texts[0].length + 1;
    }
    while (offset >= next) next += texts[++line].length + 1;
    return line;
  };
}

/**
 * The top-level local functions among the lines kept: name, first and last line (the first kept `end`
 * line after the first). `starts` and `ends` are the kept lines of each kind, ascending.
 */
function definitions(
  starts: readonly number[],
  ends: readonly number[],
  nameAt: ReadonlyMap<number, string>,
): { name: string; start: number; end: number }[] {
  const found: { name: string; start: number; end: number }[] = [];
  let e = 0;
  for (const start of starts) {
    while (e < ends.length && ends[e] <= start) e++;
    if (e < ends.length) found.push({ name: nameAt.get(start) ?? '', start, end: ends[e] });
  }
  return found;
}

/** The lines naming each of `names`, a line once per mention. */
function linesNaming(
  naming: readonly { n: number; name: string }[],
  names: ReadonlySet<string>,
): Map<string, number[]> {
  const lines = new Map<string, number[]>();
  for (const { n, name } of naming) {
    if (!names.has(name)) continue;
    const found = lines.get(name);
    if (found) found.push(n);
    else lines.set(name, [n]);
  }
  return lines;
}
