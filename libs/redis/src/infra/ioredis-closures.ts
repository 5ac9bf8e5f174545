/* eslint-disable @typescript-eslint/no-require-imports -- the modules ioredis itself loads (under jest too) */
import { createHash } from 'node:crypto';
import { dirname } from 'node:path';
import type { SundialLogger } from '@sundial/core';
import { loadAsCallback, pipelinePatch } from './ioredis-pipelines';

/**
 * Why: V8's parser pretenures a function literal assigned straight to a property (`obj.f = () => …`,
 * meant for methods set once in a constructor): each such closure is allocated in the old generation.
 * ioredis 6.0.0 does that on every command — `Command#initPromise` sets `this.reject = (err) => …`, and a
 * script command's `toWritable` wraps it again with `this.reject = (err) => …` for the NOSCRIPT
 * fallback. The old closure points at its young context (the command, its arguments, promise and
 * reply), and an old-to-new pointer is a root of every scavenge until the next full GC, dead or not:
 * everything a command touched survives its scavenges and is promoted. Measured with `--trace-gc-nvp`
 * (docs/design.md "ioredis closures"): a bare `await redis.echo(json)` loop kept ~15% of what it
 * allocated, ~1 MB a scavenge; with these replacements a few KB.
 *
 * The replacements below are the same code, except that each closure is returned by a function
 * instead of being a literal on the right of the assignment (a returned literal is not pretenured).
 * `resolve` and `reject` stay own functions of each command, callable without `this` (ioredis's
 * Cluster wraps `command.reject` and calls the original detached).
 *
 * Pipelines and `multi()` had the same cost by two more such objects: ioredis-pipelines.ts.
 *
 * Pinned: only ioredis 6.0.0 whose replaced functions have exactly the source text they were copied
 * from (each patch's `pinned`); with any other ioredis nothing is patched, and the first start of a
 * Sundial class says so through its logger (reportIoredisPatch).
 */
const PINNED_VERSION = '6.0.0';

/** Replacements of ioredis code, installed only if every patch's pinned code is as it was copied. */
export interface IoredisPatch {
  /** each replaced function or class: its code in the ioredis loaded, and the fingerprint of the copied one */
  pinned: Record<string, { code: () => object; fingerprint: string }>;
  install(): void;
}

type Settle = (value: unknown) => unknown;

/** The parts of ioredis's Command that the replacements use (private in its typings). */
interface CommandInternals {
  name: string;
  args: unknown[];
  transformed: boolean;
  isResolved: boolean;
  isSettled: boolean;
  errorStack?: Error;
  callback?: unknown;
  promise: Promise<unknown>;
  resolve: Settle;
  reject: (err: Error) => void;
  initPromise(): void;
  stringifyArguments(): void;
  toWritable(socket: object): string | Buffer;
  _clearTimers(): void;
  _convertValue(resolve: Settle): Settle;
}

type CommandClass = (new (name: string, args?: unknown[]) => CommandInternals) & {
  prototype: CommandInternals;
  _transformer: { argument: Record<string, ((args: unknown[]) => unknown[]) | undefined> };
};

type ScriptClass = new (
  lua: string,
  numberOfKeys?: number | null,
  keyPrefix?: string,
  readOnly?: boolean,
) => object;

interface ScriptInternals {
  lua: string;
  sha: string;
  Command: CommandClass;
}

const builtDir = dirname(require.resolve('ioredis'));

// require, not import: Script's module export is re-assigned.
const commandModule = () => require('ioredis/built/Command') as { default: CommandClass };
const scriptModule = () => require('ioredis/built/Script') as { default: ScriptClass };

/** Each command's `reject` (`Command#initPromise`) and a script command's NOSCRIPT wrapper of it. */
const commandPatch: IoredisPatch = {
  pinned: {
    initPromise: {
      fingerprint: '940e42e8f740cf48',
      code: () => commandModule().default.prototype.initPromise,
    },
    Script: { fingerprint: 'a9e9ca0847dbe2d7', code: () => scriptModule().default },
  },
  install() {
    replaceInitPromise(commandModule().default);
    replaceScriptCommand(scriptModule(), commandModule().default);
  },
};

let installed = false;
/** What installIoredisClosures found when it left ioredis as it is: said once, by reportIoredisPatch. */
let notice: { level: 'info' | 'warn'; message: string; fields?: Record<string, unknown> } | undefined;

/**
 * Replaces the closures once per process; a no-op after the first call. It logs nothing (no logger is
 * at hand where a connection opens): what it found is said by reportIoredisPatch.
 */
export function installIoredisClosures(): void {
  if (installed) return;
  installed = true;
  const { version } = require('ioredis/package.json') as { version: string };
  if (version !== PINNED_VERSION) {
    // Another ioredis (a newcomer's `npm install` takes the newest 6.x): nothing is wrong, so one info line.
    notice = {
      level: 'info',
      message: `ioredis ${version} runs as it is; Sundial trims its per-command garbage on ${PINNED_VERSION} only (npm install ioredis@${PINNED_VERSION} to save that GC work, nothing else changes)`,
    };
    return;
  }
  const patches = [commandPatch, pipelinePatch];
  const pinned = patches.flatMap((patch) => Object.entries(patch.pinned));
  const found = Object.fromEntries(pinned.map(([name, { code }]) => [name, fingerprint(code())]));
  const expected = Object.fromEntries(pinned.map(([name, pin]) => [name, pin.fingerprint]));
  if (pinned.some(([name, pin]) => found[name] !== pin.fingerprint)) {
    notice = {
      level: 'warn',
      message:
        'ioredis is the pinned version but its code is not what Sundial replaces (patched?): left as it is (more GC work per command, nothing else changes)',
      fields: { ioredis: version, fingerprints: found, expected },
    };
    return;
  }
  for (const patch of patches) patch.install();
}

/**
 * Says, once per process and through the first logger given (a Nest app's own, under `SundialModule`),
 * why installIoredisClosures left ioredis as it is; nothing when it replaced the closures.
 */
export function reportIoredisPatch(logger: Pick<SundialLogger, 'warn' | 'info'>): void {
  if (!notice) return;
  const { level, message, fields } = notice;
  notice = undefined;
  logger[level](message, fields);
}

/** sha256 (first 16 hex digits) of a function or class, as text. */
function fingerprint(code: object): string {
  return createHash('sha256').update(String(code)).digest('hex').slice(0, 16);
}

function replaceInitPromise(Command: CommandClass): void {
  const { optimizeErrorStack } = require('ioredis/built/utils') as {
    optimizeErrorStack: (error: Error, friendlyStack: string | undefined, filterPath: string) => Error;
  };
  const asCallback = loadAsCallback();
  /** ioredis's `reject` of a command: clears its timers, marks it settled, keeps a friendly stack. */
  const rejecter =
    (command: CommandInternals, reject: (err: Error) => void) =>
    (err: Error): void => {
      command._clearTimers();
      command.isSettled = true;
      const { errorStack } = command;
      reject(errorStack ? optimizeErrorStack(err, errorStack.stack, builtDir) : err);
    };
  Command.prototype.initPromise = function initPromise(this: CommandInternals): void {
    this.isResolved = false;
    this.isSettled = false;
    const promise = new Promise((resolve, reject) => {
      if (!this.transformed) {
        this.transformed = true;
        const transformer = Command._transformer.argument[this.name];
        if (transformer) this.args = transformer(this.args);
        this.stringifyArguments();
      }
      this.resolve = this._convertValue(resolve);
      this.reject = rejecter(this, reject);
    });
    this.promise = asCallback(promise, this.callback);
  };
}

/**
 * A defined script's command class (`Script#Command`): sent as EVAL the first time on a socket, as
 * EVALSHA after; a NOSCRIPT reply forgets that the socket has it, and ioredis's `Script#execute` sends
 * the command again (as EVAL).
 */
function replaceScriptCommand(scriptModule: { default: ScriptClass }, Command: CommandClass): void {
  const forgetOnNoscript =
    (command: CommandInternals, reject: (err: Error) => void, loaded: WeakSet<object>, socket: object) =>
    (err: Error): void => {
      if (err.message.indexOf('NOSCRIPT') !== -1) loaded.delete(socket);
      reject.call(command, err);
    };
  const commandFor = (lua: string, sha: string): CommandClass => {
    const loaded = new WeakSet<object>();
    return class CustomScriptCommand extends Command {
      override toWritable(socket: object): string | Buffer {
        this.reject = forgetOnNoscript(this, this.reject, loaded, socket);
        if (!loaded.has(socket)) {
          loaded.add(socket);
          this.name = 'eval';
          this.args[0] = lua;
        } else if (this.name === 'eval') {
          this.name = 'evalsha';
          this.args[0] = sha;
        }
        return super.toWritable(socket);
      }
    };
  };
  scriptModule.default = class Script extends scriptModule.default {
    constructor(...args: ConstructorParameters<ScriptClass>) {
      super(...args);
      const internals = this as unknown as ScriptInternals;
      internals.Command = commandFor(internals.lua, internals.sha);
    }
  };
}
