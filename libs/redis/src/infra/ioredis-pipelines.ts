/* eslint-disable @typescript-eslint/no-require-imports -- the modules ioredis itself loads (under jest too) */
import { dirname } from 'node:path';
import type { IoredisPatch } from './ioredis-closures';

/**
 * The pipeline half of ioredis-closures.ts (same cause, same pin): every `pipeline()` and `multi()`
 * (BullMQ's and Sundial's) kept its commands and replies alive through
 * scavenges, by two old-generation objects per call pointing at young ones:
 * - the Pipeline constructor defines `length` on each instance with a getter closing over it: a new
 *   getter per instance gives each pipeline a new hidden class (maps are always old), whose accessor
 *   points at the young pipeline;
 * - `multi()` sets `pipeline.exec = function …` and `pipeline.execBuffer = function …`: function
 *   literals assigned to a property, which V8 pretenures.
 * Here `length` is one getter on the prototype (same value: the queued commands), and `multi()`'s two
 * functions are returned by helpers. Measured on a loop of `multi().set().get().exec()`: 2–20 MB a
 * scavenge kept → ~6 KB (docs/design.md "ioredis closures").
 */

type Callback = ((err: Error | null, result?: unknown) => void) | undefined;
type Exec = (this: PipelineInternals, callback?: Callback) => Promise<unknown>;

/** The parts of ioredis's Redis and Cluster that a pipeline reads. */
interface Host {
  options: unknown;
  scriptsSet: Record<string, { sha: string }>;
  addedBuiltinSet: Set<string>;
  constructor: { name: string };
  isCluster?: boolean;
  status: string;
  slots: unknown[];
  connect(): Promise<void>;
  delayUntilReady(callback: (err?: Error) => void): void;
  _buildBatchContext?(batchSize: number): unknown;
  [command: string]: unknown;
}

/** The parts of ioredis's Pipeline that the replacements set or call (private in its typings). */
interface PipelineInternals {
  redis: Host;
  isPipeline: boolean;
  replyPending: number;
  _queue: unknown[];
  _result: unknown[];
  _transactions: number;
  _shaToScript: Record<string, unknown>;
  isCluster: boolean | undefined;
  options: unknown;
  promise: Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: Error) => void;
  nodeifiedPromise?: boolean;
  length: number;
  exec: Exec;
  execBuffer: Exec;
  multi(): void;
  addBatch(commands: unknown[]): void;
  [command: string]: unknown;
}

type Commander = new () => object;
type PipelineClass = new (redis: Host) => PipelineInternals;

type AsCallback = (promise: Promise<unknown>, callback: unknown) => Promise<unknown>;

/** standard-as-callback, ioredis's dependency (not Sundial's), from where ioredis finds it. */
export function loadAsCallback(): AsCallback {
  const path = require.resolve('standard-as-callback', { paths: [dirname(require.resolve('ioredis'))] });
  return (require(path) as { default: AsCallback }).default;
}

/** The `Pipeline` class and `addTransactionSupport` (where `multi()` is), replaced together. */
export const pipelinePatch: IoredisPatch = {
  pinned: {
    Pipeline: {
      fingerprint: '07f9dffcf4d75e36',
      code: () => (require('ioredis/built/Pipeline') as { default: object }).default,
    },
    addTransactionSupport: {
      fingerprint: '11c67aa8dd070b63',
      code: () =>
        (require('ioredis/built/transaction') as { addTransactionSupport: object }).addTransactionSupport,
    },
  },
  install: replacePipelineClosures,
};

/** Replaces ioredis's Pipeline export and the `multi` of Redis and Cluster. */
function replacePipelineClosures(): void {
  const pipelineModule = require('ioredis/built/Pipeline') as { default: PipelineClass };
  const Commander = (require('ioredis/built/utils/Commander') as { default: Commander }).default;
  pipelineModule.default = withPrototypeLength(pipelineModule.default, Commander);
  const multi = multiWithoutLiterals(pipelineModule, Commander);
  for (const path of ['ioredis/built/Redis', 'ioredis/built/cluster']) {
    (require(path) as { default: { prototype: { multi: unknown } } }).default.prototype.multi = multi;
  }
}

/** ioredis's Pipeline, its constructor the same but for `length`, which the prototype answers. */
function withPrototypeLength(Original: PipelineClass, Commander: Commander): PipelineClass {
  class Pipeline extends Commander {
    constructor(redis: Host) {
      super();
      const self = this as unknown as PipelineInternals;
      self.redis = redis;
      self.isPipeline = true;
      self.replyPending = 0;
      self._queue = [];
      self._result = [];
      self._transactions = 0;
      self._shaToScript = {};
      self.isCluster = redis.constructor.name === 'Cluster' || redis.isCluster;
      self.options = redis.options;
      Object.keys(redis.scriptsSet).forEach((name) => {
        self._shaToScript[redis.scriptsSet[name].sha] = redis.scriptsSet[name];
        self[name] = redis[name];
        self[`${name}Buffer`] = redis[`${name}Buffer`];
      });
      redis.addedBuiltinSet.forEach((name) => {
        self[name] = redis[name];
        self[`${name}Buffer`] = redis[`${name}Buffer`];
      });
      self.promise = new Promise((resolve, reject) => {
        self.resolve = resolve;
        self.reject = reject;
      });
    }
  }
  // Its methods are ioredis's (`instanceof` holds); `super()` above stays Commander's constructor.
  Object.setPrototypeOf(Pipeline.prototype, Original.prototype);
  Object.defineProperty(Original.prototype, 'length', {
    get(this: PipelineInternals) {
      return this._queue.length;
    },
  });
  return Pipeline as unknown as PipelineClass;
}

/** ioredis's `multi()` (transaction.js), its `exec` and `execBuffer` made by functions. */
function multiWithoutLiterals(pipelineModule: { default: PipelineClass }, Commander: Commander) {
  const { noop, wrapMultiResult } = require('ioredis/built/utils') as {
    noop: () => void;
    wrapMultiResult: (result: unknown) => unknown;
  };
  const { traceBatch } = require('ioredis/built/tracing') as {
    traceBatch: (fn: () => Promise<unknown>, context: () => unknown) => Promise<unknown>;
  };
  const asCallback = loadAsCallback();
  const baseMulti = (Commander.prototype as { multi: (this: Host) => unknown }).multi;

  const transactionExec = (pipeline: PipelineInternals, exec: Exec): Exec =>
    function (this: PipelineInternals, callback?: Callback): Promise<unknown> {
      // Wait for the cluster to be connected, since we need nodes information before continuing
      if (this.isCluster && !this.redis.slots.length) {
        if (this.redis.status === 'wait') this.redis.connect().catch(noop);
        return asCallback(
          new Promise((resolve, reject) => {
            this.redis.delayUntilReady((err) => {
              if (err) {
                reject(err);
                return;
              }
              (this.exec as (pipeline: unknown) => Promise<unknown>)(pipeline).then(resolve, reject);
            });
          }),
          callback,
        );
      }
      if (this._transactions > 0) void exec.call(pipeline);
      // Returns directly when the pipeline has been called multiple times (retries).
      if (this.nodeifiedPromise) return exec.call(pipeline);
      // Count only user commands (exclude MULTI/EXEC wrappers).
      const batchSize = Math.max(pipeline.length - 2, 0);
      const execAndUnwrap = () =>
        exec.call(pipeline).then((result) => {
          const results = result as [Error | null, unknown][];
          const execResult = results[results.length - 1];
          if (typeof execResult === 'undefined') {
            throw new Error(
              'Pipeline cannot be used to send any commands when the `exec()` has been called on it.',
            );
          }
          if (execResult[0]) {
            const failed = execResult[0] as Error & { previousErrors: Error[] };
            failed.previousErrors = [];
            for (let i = 0; i < results.length - 1; ++i) {
              if (results[i][0]) failed.previousErrors.push(results[i][0] as Error);
            }
            throw failed;
          }
          return wrapMultiResult(execResult[1]);
        });
      // Trace MULTI as a single batch operation on ioredis:batch.
      const promise =
        '_buildBatchContext' in this.redis
          ? traceBatch(execAndUnwrap, () => this.redis._buildBatchContext?.(batchSize))
          : execAndUnwrap();
      return asCallback(promise, callback);
    };

  const transactionExecBuffer = (pipeline: PipelineInternals, execBuffer: Exec): Exec =>
    function (this: PipelineInternals, callback?: Callback): Promise<unknown> {
      if (this._transactions > 0) void execBuffer.call(pipeline);
      return pipeline.exec(callback);
    };

  return function multi(this: Host, commands?: unknown, options?: unknown): unknown {
    if (typeof options === 'undefined' && !Array.isArray(commands)) {
      options = commands;
      commands = null;
    }
    if (options && (options as { pipeline?: boolean }).pipeline === false) return baseMulti.call(this);
    const pipeline = new pipelineModule.default(this);
    pipeline.multi();
    if (Array.isArray(commands)) pipeline.addBatch(commands);
    pipeline.exec = transactionExec(pipeline, pipeline.exec);
    pipeline.execBuffer = transactionExecBuffer(pipeline, pipeline.execBuffer);
    return pipeline;
  };
}
