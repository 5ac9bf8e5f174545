import { createHash } from 'node:crypto';
import { LEDGER_PREAMBLE, scriptParts, withoutUnusedFunctions } from './script-assembly';

/** A script as a Redis Function library (`FUNCTION LOAD`): one function, named as the library. */
export interface FunctionLibrary {
  /** `sundial_<file name with - replaced by _>_<16 hex of the code's sha1>`: the library and its function */
  name: string;
  /** the library's source, `#!lua name=<name>` first */
  code: string;
}

/**
 * `--- @per-call` marks a top-level `local a, b = <value>` of an include that a call changes (a cache, the
 * request, the ledger's state). A library runs its top level once per load and its locals live on from
 * call to call: the local is declared there and set to its value again at the start of every call, as
 * EVAL (which runs the whole script each call) sets it. One line, `local <names> = <value>`.
 */
const PER_CALL = /^--- @per-call\b[^\n]*\nlocal ([A-Za-z_][\w, ]*?) = ([^\n]+)$/gm;
const MARKER = /^--- @per-call\b/gm;
/** Stands for the library's name until its code is known (the name ends with the code's hash). */
const NAME = '__SUNDIAL_LIBRARY__';

/**
 * The library of a script: its includes' functions and tables at the top level, made once per load;
 * per call, `KEYS` and `ARGV` (upvalues every include function reads, as EVAL's globals), the layout
 * fence, the ledger preamble, the `@per-call` locals set anew, then the body as EVAL would run it. Two
 * releases' libraries of one script have two names (a rolling upgrade runs both).
 */
export function functionLibrary(script: string): FunctionLibrary {
  const { fence, requests, includes, body } = scriptParts(script);
  const resets: string[] = [];
  const top = `${requests}\n${includes}`;
  const hoisted = top.replace(PER_CALL, (_line, names: string, value: string) => {
    resets.push(`${names} = ${value}`);
    return `local ${names}`;
  });
  const markers = top.match(MARKER)?.length ?? 0;
  if (markers !== resets.length)
    throw new Error(
      `${script}: a '--- @per-call' marker is not followed by one 'local <names> = <value>' line`,
    );
  const run = requests ? `with_request('${script}', command_body)` : 'command_body()';
  const template = withoutUnusedFunctions(
    [
      `#!lua name=${NAME}`,
      'local KEYS, ARGV, LEDGER_SIZE',
      hoisted,
      'local function command_body()',
      body,
      'end',
      'local function call(keys, args)',
      'KEYS, ARGV = keys, args',
      `${fence}\n${LEDGER_PREAMBLE}\n`,
      ...resets,
      `return ${run}`,
      'end',
      `redis.register_function('${NAME}', call)`,
      '',
    ].join('\n'),
  );
  const hash = createHash('sha1').update(template).digest('hex').slice(0, 16);
  const name = `sundial_${script.replace(/-/g, '_')}_${hash}`;
  return { name, code: template.replaceAll(NAME, name) };
}
