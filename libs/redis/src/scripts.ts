import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChainableCommander, Redis } from 'ioredis';

/**
 * The Lua commands live next to this file (`commands/*.lua`); the build copies them into dist, so
 * resolving from __dirname works under ts-jest (source) and from the compiled output alike.
 */
export const COMMANDS_DIR = join(__dirname, 'commands');

/** Files starting with `_` are includes prepended to every command, not commands themselves. */
const SHARED_INCLUDE = '_shared.lua';

export interface LuaCommand {
  /** ioredis command name: `sundial_<file name with - replaced by _>` */
  name: string;
  lua: string;
}

let cached: Map<string, LuaCommand> | undefined;

/** Reads every command once per process (the shared include prepended). Keyed by file name without `.lua`. */
export function loadCommands(): Map<string, LuaCommand> {
  if (cached) return cached;
  const shared = readFileSync(join(COMMANDS_DIR, SHARED_INCLUDE), 'utf8');
  cached = new Map();
  for (const file of readdirSync(COMMANDS_DIR).sort()) {
    if (!file.endsWith('.lua') || file.startsWith('_')) continue;
    const script = file.slice(0, -'.lua'.length);
    const body = readFileSync(join(COMMANDS_DIR, file), 'utf8');
    cached.set(script, { name: commandName(script), lua: `${shared}\n${body}` });
  }
  return cached;
}

function commandName(script: string): string {
  return `sundial_${script.replace(/-/g, '_')}`;
}

/** Registers every command on a connection; commands it already has are left as they are. */
export function defineCommands(redis: Redis): void {
  for (const command of loadCommands().values()) {
    if (typeof (redis as unknown as Record<string, unknown>)[command.name] === 'function') continue;
    // Every command takes exactly one key, the partition base `P:{pN}:` (docs/design.md).
    redis.defineCommand(command.name, { numberOfKeys: 1, lua: command.lua });
  }
}

type CommandTarget = Redis | ChainableCommander;
type ScriptFn = (base: string, ...args: (string | number)[]) => Promise<unknown>;

/**
 * Runs a command on a connection (resolves with the reply) or queues it on a pipeline/multi
 * (the reply arrives with `exec()`). The connection must have gone through `defineCommands`.
 */
export function runScript(
  target: CommandTarget,
  script: string,
  base: string,
  ...args: (string | number)[]
): Promise<unknown> {
  const fn = (target as unknown as Record<string, ScriptFn | undefined>)[commandName(script)];
  if (typeof fn !== 'function') throw new Error(`Lua command '${script}' is not defined on this connection`);
  return fn.call(target, base, ...args);
}
