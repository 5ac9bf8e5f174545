import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { Cluster, Redis, type ChainableCommander } from 'ioredis';
import type { RedisClient } from '../infra/connection';
import { callFunction, loadLibraries } from './function-calls';
import { assembleScript, COMMANDS_DIR } from './script-assembly';
import { type FunctionLibrary, functionLibrary } from './script-functions';

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

/**
 * The hot scripts — the fire path's and the client's writes —, called as Redis Functions (`FCALL`, Redis
 * 7.0 or later): a library's include functions and tables are made once per load, not on every call as
 * EVALSHA makes them (docs/design.md "Redis script contract", "Loading"). The others (rare: leases,
 * reconciling, repartition, migration) stay scripts (EVALSHA).
 */
export const FUNCTION_SCRIPTS: ReadonlySet<ScriptName> = new Set<ScriptName>([
  'take-due',
  'claim',
  'complete',
  'schedule',
  'cancel',
  'cancel-all',
  'reschedule',
  'pause',
  'resume',
  'trigger',
  'backfill',
]);

export interface LuaCommand {
  /** ioredis command name: `sundial_<file name with - replaced by _>` */
  name: string;
  lua: string;
}

let cached: Map<ScriptName, LuaCommand> | undefined;

/**
 * Reads every command sent as a script (EVALSHA: all but FUNCTION_SCRIPTS) once per process, its includes
 * inlined. A function script is only ever FCALLed (functionLibraries), so its EVAL form is not made: it
 * was ~60 % of this work at every process's start, for text nothing sent.
 */
export function loadCommands(): Map<ScriptName, LuaCommand> {
  if (cached) return cached;
  const files = readdirSync(COMMANDS_DIR).filter((file) => file.endsWith('.lua'));
  const unknown = files.filter((file) => !(SCRIPT_NAMES as readonly string[]).includes(file.slice(0, -4)));
  if (unknown.length > 0) throw new Error(`Lua files without a ScriptName: ${unknown.join(', ')}`);
  cached = new Map();
  for (const script of SCRIPT_NAMES) {
    if (FUNCTION_SCRIPTS.has(script)) continue;
    cached.set(script, { name: commandName(script), lua: assembleScript(script) });
  }
  return cached;
}

let libraries: Map<ScriptName, FunctionLibrary> | undefined;

/** The library of each of FUNCTION_SCRIPTS, made once per process. */
export function functionLibraries(): Map<ScriptName, FunctionLibrary> {
  libraries ??= new Map([...FUNCTION_SCRIPTS].map((script) => [script, functionLibrary(script)]));
  return libraries;
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

function commandName(script: ScriptName): string {
  return `sundial_${script.replace(/-/g, '_')}`;
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
