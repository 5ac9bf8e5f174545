import { createHash } from 'node:crypto';
import { Cluster, Redis, type ChainableCommander } from 'ioredis';
import type { RedisClient } from '../infra/connection';
import { callFunction, loadLibraries } from './function-calls';
import type { FunctionLibrary } from './script-functions';
import { commandName, FUNCTION_SCRIPTS, type ScriptName } from './script-names';
import { type AssembledScripts, assembleScripts, type LuaCommand, readPrebuilt } from './script-prebuilt';

export { FUNCTION_SCRIPTS, SCRIPT_NAMES, type ScriptName } from './script-names';

let scripts: AssembledScripts | undefined;

/**
 * Every script, once per process: from the file `npm run build` wrote beside the compiled code (one
 * read), or, run from the sources or with that file stale, assembled from the `.lua` files
 * (script-prebuilt.ts).
 */
function assembled(): AssembledScripts {
  scripts ??= readPrebuilt() ?? assembleScripts();
  return scripts;
}

/** Every command sent as a script (EVALSHA: all but FUNCTION_SCRIPTS), its includes inlined. */
export function loadCommands(): Map<ScriptName, LuaCommand> {
  return assembled().commands;
}

/** The library of each of FUNCTION_SCRIPTS. */
export function functionLibraries(): Map<ScriptName, FunctionLibrary> {
  return assembled().libraries;
}

/**
 * Loads the function libraries into Redis (every primary of a Cluster), refusing a Redis before 7.0 or
 * an ACL user that may not load them: a dispatcher, a worker and a client (RedisTimers.connect) call it
 * at start, so they fail there and not at their first fire call or write.
 */
export function loadFunctions(redis: RedisClient): Promise<void> {
  return loadLibraries(redis, [...functionLibraries().values()]);
}

let called: Map<string, ScriptName> | undefined;

/**
 * The Sundial script a command sent to Redis calls — EVALSHA by its sha, EVAL by its body, FCALL by its
 * function — or undefined (for tests that act on one script's calls, and the slow log's names).
 */
export function scriptOfCall(command: readonly string[]): ScriptName | undefined {
  if (!called) {
    called = new Map();
    for (const [script, { lua }] of loadCommands()) {
      called.set(`evalsha ${createHash('sha1').update(lua).digest('hex')}`, script);
      called.set(`eval ${lua}`, script);
    }
    for (const [script, { name }] of functionLibraries()) called.set(`fcall ${name}`, script);
  }
  return called.get(`${String(command[0]).toLowerCase()} ${command[1]}`);
}

/**
 * Registers every command but FUNCTION_SCRIPTS (FCALLed) on a connection; commands it already has are
 * left as they are.
 */
export function defineCommands(redis: RedisClient): void {
  for (const command of loadCommands().values()) {
    if (typeof (redis as unknown as Record<string, unknown>)[command.name] === 'function') continue;
    // Every command takes exactly one key, the partition base `P:{pN}:` (docs/design.md).
    redis.defineCommand(command.name, { numberOfKeys: 1, lua: command.lua });
  }
}

type CommandTarget = RedisClient | ChainableCommander;
/**
 * A script's or function's argument; an array stands for its elements (ioredis flattens every command's
 * arguments): a long list is not copied.
 */
export type ScriptArg = string | number | readonly (string | number)[];
type ScriptFn = (base: string, ...args: ScriptArg[]) => Promise<unknown>;

/**
 * Runs a command on a connection (resolves with the reply) or queues it on a pipeline/multi (the reply
 * arrives with `exec()`). The connection must have gone through `defineCommands`. One of FUNCTION_SCRIPTS
 * runs on a connection only (it may load its library and go again: a pipeline has no place for that).
 * `argv1` is the script's ARGV[1] (the prefix, maybe with a request); `ledgerSize` travels as ARGV[2] and
 * the script's preamble takes it off (LEDGER_PREAMBLE).
 */
export function runScript(
  target: CommandTarget,
  script: ScriptName,
  base: string,
  ledgerSize: number,
  argv1: string,
  ...args: ScriptArg[]
): Promise<unknown> {
  if (FUNCTION_SCRIPTS.has(script)) {
    if (!(target instanceof Redis || target instanceof Cluster))
      throw new Error(
        `Lua command '${script}' runs as a Redis Function: call it on a connection, not a pipeline`,
      );
    return callFunction(target, functionLibraries().get(script)!, base, argv1, ledgerSize, ...args);
  }
  const fn = (target as unknown as Record<string, ScriptFn | undefined>)[commandName(script)];
  if (typeof fn !== 'function') throw new Error(`Lua command '${script}' is not defined on this connection`);
  return fn.call(target, base, argv1, ledgerSize, ...args);
}
