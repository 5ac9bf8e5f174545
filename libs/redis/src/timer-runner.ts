import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { describeFailure, type JsonValue, SundialError, type Timer, type TimerHandler } from '@sundial/core';
import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { ClusterClock } from './cluster-clock';
import { CompletionBatcher } from './completion-batcher';
import { cronFollowUp, lostCompletion } from './completion';
import {
  type ClaimResult,
  type Completion,
  FireCommands,
  type FireJobData,
  type LeaseRef,
  type RunMode,
  type TimerRef,
} from './fire-commands';
import { SundialKeys } from './keys';
import { reconcilePartition } from './reconciler';
import { closeRedis, openRedis, type RedisConnection } from './redis-connection';
import { decodeRow, type RowFields } from './row';
import { defineCommands } from './scripts';

/** Where the runner reports what it could not do; timer lines carry `key`, `id`, `version` as fields. */
export interface TimerRunnerLogger {
  error(message: string, fields?: Record<string, unknown>): void;
}

/** A finished handler run, as the metrics see it. */
export interface FinishedRun {
  handler: string;
  status: 'ok' | 'failed';
  /** run start − due, by the Redis clock */
  latenessMs: number;
  durationMs: number;
}

/** Told what the runner does, e.g. to feed metrics (SPEC §6). */
export interface TimerRunnerObserver {
  runFinished(run: FinishedRun): void;
  /** a timer of a fire job found stale at claim: gone, changed (version) or not pending (status) */
  stale(reason: string): void;
  /** cron occurrences that came while a run went on */
  skipped(reason: string, count: number): void;
}

export interface TimerRunnerOptions {
  connection: RedisConnection;
  prefix?: string;
  partitions?: number;
  /** handler name → function; a timer naming any other handler fails with reason 'unknown-handler' */
  handlers: Record<string, TimerHandler>;
  /** fire jobs in flight per partition queue (default 10); a job runs its batch's handlers together */
  concurrency?: number;
  /** how long a claim outlives a silent worker (default 30 s); renewed every leaseMs / 3 */
  leaseMs?: number;
  /** names this process on the leases it holds (default host-pid-random) */
  workerId?: string;
  logger?: TimerRunnerLogger;
  observer?: TimerRunnerObserver;
}

export const DEFAULT_LEASE_MS = 30_000;
export const DEFAULT_CLOSE_GRACE_MS = 10_000;
const DEFAULT_CONCURRENCY = 10;
/** The longest a job that arrived before its due is held to claim its timers (it also bounds a close). */
const MAX_EARLY_WAIT_MS = 1000;
/** What the runner's own reconcile pass at shutdown uses (it only needs the lease part to be prompt). */
const SHUTDOWN_RECONCILE = { graceMs: 2000, batchLimit: 1000 };

interface ActiveRun extends LeaseRef {
  partition: number;
  id: string;
  version: number;
  mode: RunMode;
  /** made when the handler first reads `ctx.signal` or the run is aborted: most runs need none */
  controller?: AbortController;
  /** handed back at shutdown: its outcome is no longer this runner's to record */
  released: boolean;
  /** lets the job finish without waiting for a handler that ignores its signal */
  letGo(): void;
}

type Claimed = Extract<ClaimResult, { kind: 'claimed' }>;
type RunOutcome = Pick<Completion, 'outcome' | 'error'>;

/**
 * Runs due timers (docs/design.md "The fire path", SPEC §3.2, §3.8, §4.5, §4.6): one BullMQ worker per
 * partition queue; each fire job is claimed in one call, its handlers run with a lease renewed while
 * they go on, and their outcomes are completed in batches. Every process may run one; there is no leader.
 */
export class TimerRunner {
  readonly workerId: string;
  private readonly keys: SundialKeys;
  private readonly handlers: Record<string, TimerHandler>;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly logger: TimerRunnerLogger;
  private readonly observer: TimerRunnerObserver | undefined;
  private readonly redis: Redis;
  private readonly subscriber: Redis;
  private readonly bullRedis: Redis;
  private readonly clock: ClusterClock;
  private readonly commands: FireCommands;
  private readonly batcher: CompletionBatcher;
  private readonly active = new Set<ActiveRun>();
  private readonly jobs = new Set<Promise<void>>();
  private workers: Worker<FireJobData>[] = [];
  private renewal: NodeJS.Timeout | undefined;
  private closing: Promise<void> | undefined;
  private graceOver = false;

  constructor(options: TimerRunnerOptions) {
    this.keys = new SundialKeys(options.prefix, options.partitions);
    this.handlers = options.handlers;
    this.concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.workerId = options.workerId ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.logger = options.logger ?? console;
    this.observer = options.observer;
    this.redis = openRedis(options.connection);
    this.subscriber = openRedis(options.connection);
    this.bullRedis = openRedis(options.connection, { maxRetriesPerRequest: null });
    defineCommands(this.redis);
    this.clock = new ClusterClock(this.redis);
    this.commands = new FireCommands(this.redis, this.keys);
    this.batcher = new CompletionBatcher(this.commands);
  }

  /** Listens for aborts first, so no run starts that a cancel could not reach; then takes jobs. */
  async start(): Promise<void> {
    await this.clock.start();
    this.subscriber.on('message', (_channel: string, message: string) => this.onAbort(message));
    await this.subscriber.subscribe(this.keys.abortChannel);
    this.renewal = setInterval(() => void this.renewLeases(), Math.max(1, Math.floor(this.leaseMs / 3)));
    this.workers = this.keys.all().map((partition) => {
      const worker = new Worker<FireJobData>(
        this.keys.queueName(partition),
        (job) => this.track(this.fire(partition, job.data.timers)),
        {
          connection: this.bullRedis,
          prefix: this.keys.bullPrefix,
          concurrency: this.concurrency,
          // BullMQ renews its lock every lockDuration / 2, so with twice the lease a dead worker's job
          // comes back (stalled check) only once its lease has expired too, and the claim takes it over.
          lockDuration: 2 * this.leaseMs,
          stalledInterval: this.leaseMs,
        },
      );
      worker.on('error', (error) =>
        this.logger.error(`Sundial runner, partition ${partition}: ${error.message}`),
      );
      return worker;
    });
    await Promise.all(this.workers.map((worker) => worker.waitUntilReady()));
  }

  /**
   * Graceful stop (SPEC §4.6): take no more jobs, let running handlers finish for up to `graceMs`, then
   * abort the rest and hand their claims back (at-least-once: they run again elsewhere; at-most-once:
   * recorded lost), and close every connection.
   */
  close(graceMs = DEFAULT_CLOSE_GRACE_MS): Promise<void> {
    this.closing ??= this.shutdown(graceMs);
    return this.closing;
  }

  private async shutdown(graceMs: number): Promise<void> {
    const workersClosed = Promise.all(this.workers.map((worker) => worker.close()));
    await this.jobsSettled(graceMs);
    this.graceOver = true;
    await this.handBack([...this.active]);
    await workersClosed;
    clearInterval(this.renewal);
    this.clock.stop();
    await Promise.all([closeRedis(this.subscriber), closeRedis(this.bullRedis)]);
    await closeRedis(this.redis);
  }

  private jobsSettled(graceMs: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, graceMs);
      void Promise.allSettled([...this.jobs]).then(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private track(job: Promise<void>): Promise<void> {
    this.jobs.add(job);
    return job.finally(() => this.jobs.delete(job));
  }

  /**
   * One fire job. The dispatcher hands jobs over a little before their timers are due, so each timer
   * is claimed when our estimate of Redis's clock reaches its due — everything due by then in one call
   * — and what was claimed runs at once. Never early: the claim checks Redis's own clock, and a timer
   * it still finds early waits the remainder it reports. A timer due more than MAX_EARLY_WAIT_MS ahead
   * (a clock jump, a job added by hand) is dropped: it stays armed without a job, and the reconciler
   * arms it again. Closing: timers falling due during the grace are still claimed and run (they are
   * this job's); once the grace is over the unclaimed rest stays armed the same way.
   */
  private async fire(partition: number, refs: TimerRef[]): Promise<void> {
    const runs: Promise<void>[] = [];
    try {
      // Each timer with the Redis time to claim it at: its due, or what an early claim reported.
      let waiting = refs.map((ref) => ({ ref, at: ref.due }));
      while (waiting.length > 0 && !this.graceOver) {
        const now = this.clock.now();
        waiting = waiting.filter((entry) => entry.at - now <= MAX_EARLY_WAIT_MS);
        const ready = waiting.filter((entry) => entry.at <= now);
        if (ready.length === 0) {
          if (waiting.length > 0) await delay(earliest(waiting) - now);
          continue;
        }
        waiting = waiting.filter((entry) => entry.at > now);
        const results = await this.commands.claim(
          partition,
          this.leaseMs,
          this.workerId,
          ready.map((entry) => entry.ref),
        );
        const answeredAt = this.clock.now();
        results.forEach((result, i) => {
          if (result.kind === 'claimed') runs.push(this.run(partition, result));
          if (result.kind === 'lost') runs.push(this.settleLost(partition, result.fields));
          if (result.kind === 'stale') this.observer?.stale(result.reason);
          if (result.kind === 'early') waiting.push({ ref: ready[i].ref, at: answeredAt + result.waitMs });
        });
      }
    } finally {
      // Even when a later claim fails, the runs already started belong to this job.
      await Promise.all(runs);
    }
  }

  private async run(partition: number, claimed: Claimed): Promise<void> {
    const timer = decodeRow(claimed.fields);
    let letGo!: () => void;
    const handedBack = new Promise<null>((resolve) => (letGo = () => resolve(null)));
    const run: ActiveRun = {
      partition,
      id: timer.id,
      key: timer.key,
      version: Number(claimed.fields.rv),
      runCount: timer.runCount,
      mode: claimed.mode,
      released: false,
      letGo,
    };
    if (this.graceOver) return this.handBack([run]);
    this.active.add(run);
    const startedAt = this.clock.now();
    const outcome = await Promise.race([this.invoke(run, claimed.due, timer), handedBack]);
    this.active.delete(run);
    if (outcome === null || run.released) return;
    const { id, key, version, runCount, mode } = run;
    const endedAt = this.clock.now();
    this.observer?.runFinished({
      handler: timer.handler,
      status: outcome.outcome === 'ok' ? 'ok' : 'failed',
      latenessMs: Math.max(0, startedAt - claimed.due),
      durationMs: endedAt - startedAt,
    });
    const followUp = cronFollowUp(claimed.fields, Number(claimed.fields.lf), endedAt);
    try {
      const completed = await this.batcher.complete(partition, {
        id,
        key,
        version,
        runCount,
        mode,
        ...outcome,
        ...followUp,
      });
      // complete.lua records the skipped slots of a held cron run it settles (its 'skipped' event).
      if (completed === 'done' && mode === 'held' && followUp.skipped > 0) {
        this.observer?.skipped('overlap', followUp.skipped);
      }
    } catch (error) {
      // The lease then expires and the reconciler settles the run (SPEC §3.8).
      this.logger.error(`Sundial could not complete a run: ${(error as Error).message}`, {
        key,
        id,
        version,
      });
    }
  }

  private async invoke(run: ActiveRun, due: number, timer: Timer): Promise<RunOutcome> {
    const handler = this.handlers[timer.handler];
    try {
      if (!handler) throw unknownHandler(timer.handler);
      const { id, key, version, runCount } = run;
      const payload: JsonValue = timer.payload;
      await handler(payload, {
        id,
        key,
        version,
        due,
        runCount,
        payload,
        get signal() {
          return controllerOf(run).signal;
        },
        timer,
      });
      return { outcome: 'ok' };
    } catch (error) {
      return { outcome: 'failed', error: describeFailure(error) };
    }
  }

  private async settleLost(partition: number, fields: RowFields): Promise<void> {
    await this.batcher.complete(partition, lostCompletion(fields, this.clock.now()));
  }

  /** Extends every held lease; a run whose lease is gone (reclaimed, settled lost) is aborted. */
  private async renewLeases(): Promise<void> {
    for (const [partition, runs] of byPartition([...this.active].filter((run) => run.mode === 'held'))) {
      try {
        const held = await this.commands.renewLeases(
          partition,
          this.leaseMs,
          this.workerId,
          runs.map(leaseRef),
        );
        runs.forEach((run, i) => held[i] || abort(run, `the lease on ${run.key} v${run.version} was lost`));
      } catch (error) {
        this.logger.error(`Sundial could not renew leases: ${(error as Error).message}`);
      }
    }
  }

  /** Stops the local runs of an entry that was cancelled, replaced, rescheduled or paused (SPEC §4.5). */
  private onAbort(message: string): void {
    const target = JSON.parse(message) as { key: string; id: string; version: number };
    for (const run of this.active) {
      if (run.key === target.key && run.id === target.id && run.version <= target.version) {
        abort(run, `${run.key} v${run.version} was cancelled, replaced or rescheduled`);
      }
    }
  }

  /** Shutdown: abort, stop waiting for, and release the claims of runs that did not finish in time. */
  private async handBack(runs: ActiveRun[]): Promise<void> {
    for (const run of runs) {
      run.released = true;
      abort(run, 'the worker is shutting down');
      run.letGo();
    }
    // A free run holds no lease: its next tick is armed already, nothing to hand back.
    for (const [partition, held] of byPartition(runs.filter((run) => run.mode === 'held'))) {
      try {
        await this.commands.release(partition, this.workerId, held.map(leaseRef));
        await reconcilePartition(
          this.commands,
          this.clock,
          partition,
          SHUTDOWN_RECONCILE.graceMs,
          SHUTDOWN_RECONCILE.batchLimit,
        );
      } catch (error) {
        this.logger.error(`Sundial could not release claims: ${(error as Error).message}`);
      }
    }
  }
}

function leaseRef(run: ActiveRun): LeaseRef {
  return { key: run.key, runCount: run.runCount };
}

function byPartition(runs: ActiveRun[]): Map<number, ActiveRun[]> {
  const groups = new Map<number, ActiveRun[]>();
  for (const run of runs) groups.set(run.partition, [...(groups.get(run.partition) ?? []), run]);
  return groups;
}

/** A run's AbortController, made on first need (making one costs more than a short run itself). */
function controllerOf(run: ActiveRun): AbortController {
  run.controller ??= new AbortController();
  return run.controller;
}

function abort(run: ActiveRun, why: string): void {
  const controller = controllerOf(run);
  if (controller.signal.aborted) return;
  const reason = new Error(why);
  reason.name = 'AbortError';
  controller.abort(reason);
}

function earliest(entries: { at: number }[]): number {
  let first = Infinity;
  for (const entry of entries) first = Math.min(first, entry.at);
  return first;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function unknownHandler(name: string): SundialError {
  return new SundialError({
    reason: 'unknown-handler',
    field: 'handler',
    message: `No handler named '${name}' is registered on this worker.`,
    fix: `Register '${name}' on the worker (an @OnTimer('${name}') method or the runner's handlers), or schedule the timer with a registered handler name.`,
  });
}
