import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { extname, join } from 'node:path';
import { assembleScript, COMMANDS_DIR } from './script-assembly';
import { type FunctionLibrary, functionLibrary } from './script-functions';
import { commandName, FUNCTION_SCRIPTS, SCRIPT_NAMES, type ScriptName } from './script-names';

export interface LuaCommand {
  /** ioredis command name: `sundial_<file name with - replaced by _>` */
  name: string;
  lua: string;
}

/** Every script a process sends, assembled: the EVAL scripts and the function libraries. */
export interface AssembledScripts {
  commands: Map<ScriptName, LuaCommand>;
  libraries: Map<ScriptName, FunctionLibrary>;
}

/**
 * Assembles every script from the `.lua` files: each command sent as a script (EVALSHA: all but
 * FUNCTION_SCRIPTS) with its includes inlined, and the library of each of FUNCTION_SCRIPTS. A function
 * script is only ever FCALLed, so its EVAL form is not made: it was ~60 % of this work, for text nothing
 * sent.
 */
export function assembleScripts(): AssembledScripts {
  const files = readdirSync(COMMANDS_DIR).filter((file) => file.endsWith('.lua'));
  const unknown = files.filter((file) => !(SCRIPT_NAMES as readonly string[]).includes(file.slice(0, -4)));
  if (unknown.length > 0) throw new Error(`Lua files without a ScriptName: ${unknown.join(', ')}`);
  const scripts = SCRIPT_NAMES.filter((script) => !FUNCTION_SCRIPTS.has(script));
  return {
    commands: new Map(
      scripts.map((script) => [script, { name: commandName(script), lua: assembleScript(script) }]),
    ),
    libraries: new Map([...FUNCTION_SCRIPTS].map((script) => [script, functionLibrary(script)])),
  };
}

/**
 * Where `npm run build` writes every script assembled (scripts/copy-assets.js), beside the compiled
 * loader; a process run from the sources (ts-jest) finds none there and assembles them.
 */
export const PREBUILT_FILE = join(__dirname, 'assembled-scripts.txt');

/**
 * The file's first line, JSON: what made it, and each script's names and its text's length (in UTF-16
 * code units, as JS counts) in the order the texts follow it, back to back and as they are. Why not the
 * texts in JSON: JSON.parse copies ~1 MB of escaped Lua into new strings; a slice of the file's one
 * decoded string is no copy. Fresh processes, the same texts: ~17 against ~32 ms of CPU to read them.
 */
interface Header {
  /** sourcesFingerprint() when the file was written */
  fingerprint: string;
  /** script, ioredis command name, length */
  commands: [ScriptName, string, number][];
  /** script, library name, length */
  libraries: [ScriptName, string, number][];
}

/** Assembles every script and writes them to `file`, with the fingerprint of what they were made from. */
export function writePrebuilt(file = PREBUILT_FILE): void {
  const { commands, libraries } = assembleScripts();
  const header: Header = {
    fingerprint: sourcesFingerprint(),
    commands: [...commands].map(([script, { name, lua }]) => [script, name, lua.length]),
    libraries: [...libraries].map(([script, { name, code }]) => [script, name, code.length]),
  };
  const texts = [...commands.values()].map(({ lua }) => lua);
  texts.push(...[...libraries.values()].map(({ code }) => code));
  writeFileSync(file, `${JSON.stringify(header)}\n${texts.join('')}`);
}

/**
 * The scripts `file` holds, or undefined when there is none, it is cut short (a build killed while
 * writing it), or it was made from other sources than the ones beside this module: a stale file is never
 * used, the caller assembles instead.
 */
export function readPrebuilt(file = PREBUILT_FILE): AssembledScripts | undefined {
  let content: string;
  let header: Header;
  try {
    content = readFileSync(file, 'utf8');
    header = JSON.parse(content.slice(0, content.indexOf('\n'))) as Header;
  } catch {
    return undefined;
  }
  if (header.fingerprint !== sourcesFingerprint()) return undefined;
  let at = content.indexOf('\n') + 1;
  const next = (length: number) => content.slice(at, (at += length));
  const commands = new Map(
    header.commands.map(([script, name, length]) => [script, { name, lua: next(length) }]),
  );
  const libraries = new Map(
    header.libraries.map(([script, name, length]) => [script, { name, code: next(length) }]),
  );
  return at === content.length ? { commands, libraries } : undefined;
}

/**
 * The modules whose code makes the scripts' text out of the `.lua` files (this one included: it writes
 * and reads the file), by name without extension: `.js` compiled, `.ts` under ts-jest.
 */
const ASSEMBLERS = ['script-assembly', 'script-functions', 'script-names', 'script-prebuilt'];

/**
 * A hash of every input of the assembly: each `.lua` file under commands/ (its path there and its text)
 * and the assembling modules' own code. Why contents and not the build's stamp or the files' mtimes:
 * a dist is copied (`npm install --install-links` packs it, Docker's COPY, cp), which sets or keeps
 * mtimes regardless of what changed, and a `.lua` copied over the built one, a `tsc` or `nest build`
 * without this step (the file of an older build left in dist) must show. Why not leave the `.lua`
 * files out of dist instead: a dist without the file (`nest build`) needs them, and a newer `.lua`
 * copied in would go unseen. Reading the 42 files and hashing their ~190 KB costs ~4 ms of CPU in a
 * fresh process; assembling, ~90 ms (docs/design.md "Loading").
 */
export function sourcesFingerprint(): string {
  const hash = createHash('sha1');
  const lua = readdirSync(COMMANDS_DIR, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.lua'))
    .sort();
  const files = [
    ...lua.map((file) => ({ name: `commands/${file}`, path: join(COMMANDS_DIR, file) })),
    ...ASSEMBLERS.map((module) => ({ name: module, path: join(__dirname, module + extname(__filename)) })),
  ];
  for (const { name, path } of files) hash.update(`${name}\0`).update(readFileSync(path)).update('\0');
  return hash.digest('hex');
}
