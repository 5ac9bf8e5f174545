import { createHash } from 'node:crypto';
import { dirname } from 'node:path';
import { consoleLogger } from '@sundial/core';
import {
  loadAsCallback,
  PIPELINE_FINGERPRINTS,
  pipelineSources,
  replacePipelineClosures,
} from './ioredis-pipelines';

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
 * from (`FINGERPRINTS`); with any other ioredis nothing is patched and a warning says so.
 */
const PINNED_VERSION = '6.0.0';
/** sha256 (first 16 hex digits) of each replaced function or class, as text. */
const FINGERPRINTS: Record<string, string> = {
  initPromise: '940e42e8f740cf48',
  Script: 'a9e9ca0847dbe2d7',
  ...PIPELINE_FINGERPRINTS,
};

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

let installed = false;

/** Replaces the closures once per process; a no-op after the first call. */
export function installIoredisClosures(): void {
  if (installed) return;
  installed = true;
  // require, not import: the modules ioredis itself loads (under jest too), and Script's is re-assigned.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { version } = require('ioredis/package.json') as { version: string };
  const command = require('ioredis/built/Command') as { default: CommandClass };
  const script = require('ioredis/built/Script') as { default: ScriptClass };
  /* eslint-enable @typescript-eslint/no-require-imports */
  const sources: Record<string, object> = {
    initPromise: command.default.prototype.initPromise,
    Script: script.default,
    ...pipelineSources(),
  };
  const found = Object.fromEntries(Object.entries(sources).map(([name, code]) => [name, fingerprint(code)]));
  const pinned = Object.keys(FINGERPRINTS).every((name) => found[name] === FINGERPRINTS[name]);
  if (version !== PINNED_VERSION || !pinned) {
    consoleLogger.warn(
      'ioredis is not the version whose per-command closures Sundial replaces: left as it is (more GC work per command, nothing else changes)',
      { ioredis: version, pinned: PINNED_VERSION, fingerprints: found, expected: FINGERPRINTS },
    );
    return;
  }
  replaceInitPromise(command.default);
  replaceScriptCommand(script, command.default);
  replacePipelineClosures();
}

function fingerprint(code: object): string {
  return createHash('sha256').update(String(code)).digest('hex').slice(0, 16);
}

function replaceInitPromise(Command: CommandClass): void {
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { optimizeErrorStack } = require('ioredis/built/utils') as {
    optimizeErrorStack: (error: Error, friendlyStack: string | undefined, filterPath: string) => Error;
  };
  const asCallback = loadAsCallback();
  /* eslint-enable @typescript-eslint/no-require-imports */
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
