import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { describeFailure, type JsonValue, refusals, type Timer, type TimerHandler } from '@sundial/core';
import { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { closeRedis, openRedis } from '../infra/connection';
import { Partitioned, type PartitionedOptions } from '../infra/partitioned';
import {
  type ClaimResult,
  type Completion,
  FireCommands,
  type FireJobData,
  type TimerRef,
} from '../store/fire-commands';
import { RESEND_MEMORY_MS } from '../store/requests';
import { decodeRow, type RowFields } from '../store/row';
import { cronFollowUp, lostCompletion } from './completion';
import { CompletionBatcher } from './completion-batcher';
import { type ActiveRun, controllerOf, LeaseKeeper } from './lease-keeper';

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

export interface TimerRunnerOptions extends PartitionedOptions {
  /** handler name → function; a timer naming any other handler fails with reason 'unknown-handler' */
  handlers: Record<string, TimerHandler>;
  /** fire jobs in flight per partition queue (default 16); a job runs its batch's handlers together */
  concurrency?: number;
  /** how long a claim outlives a silent worker (default 30 s); renewed every leaseMs / 3 */
  leaseMs?: number;
  /** names this process on the leases it holds (default host-pid-random) */
  workerId?: string;
  logger?: TimerRunnerLogger;
  observer?: TimerRunnerObserver;
}

/** How long a claim outlives a silent worker (SUNDIAL_LEASE_MS). */
export const DEFAULT_LEASE_MS = 30_000;
/**
 * How long `close()` lets running handlers go on before their signals abort (SUNDIAL_SHUTDOWN_GRACE_MS):
 * under Kubernetes' default 30 s termination grace, with room for the hand-back and the exit.
 */
export const DEFAULT_CLOSE_GRACE_MS = 25_000;
/** Fire jobs in flight per partition queue (WORKER_CONCURRENCY). */
export const DEFAULT_CONCURRENCY = 16;
/** The longest a job that arrived before its due is held to claim its timers (it also bounds a close). */
const MAX_EARLY_WAIT_MS = 1000;
/** How many leases long Redis remembers a completion's answer (a retried batch answers as its first try). */
const COMPLETION_MEMORY_LEASES = 4;

type Claimed = Extract<ClaimResult, { kind: 'claimed' }>;
type RunOutcome = Pick<Completion, 'outcome' | 'error'>;

/**
 * Runs due timers (docs/design.md "The fire path", SPEC §3.2, §3.8, §4.5, §4.6): one BullMQ worker per
 * partition queue; each fire job is claimed in one call, its handlers run with a lease renewed while
 * they go on, and their outcomes are completed in batches. Every process may run one; there is no leader.
 */
export class TimerRunner extends Partitioned<FireCommands> {
  readonly workerId: string;
  private readonly handlers: Record<string, TimerHandler>;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly logger: TimerRunnerLogger;
  private readonly observer: TimerRunnerObserver | undefined;
  private readonly bullRedis: Redis;
  private readonly batcher: CompletionBatcher;
  private readonly leases: LeaseKeeper;
  private readonly jobs = new Set<Promise<void>>();
  private workers: Worker<FireJobData>[] = [];
  private closing: Promise<void> | undefined;
  private graceOver = false;

  constructor(options: TimerRunnerOptions) {
    super(options, (redis, keys) => new FireCommands(redis, keys));
    this.handlers = options.handlers;
    this.concurrency = options.concurrency ?? DEFAULT_CONCURRENCY;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.workerId = options.workerId ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.logger = options.logger ?? console;
    this.observer = options.observer;
    this.bullRedis = openRedis(options.connection, { maxRetriesPerRequest: null });
    this.batcher = new CompletionBatcher(this.commands, {
      // A completion is retried while the worker renews its lease: remember its answer for a few leases.
      memoryMs: Math.max(RESEND_MEMORY_MS, COMPLETION_MEMORY_LEASES * this.leaseMs),
      keepTrying: () => !this.graceOver,
    });
    this.leases = new LeaseKeeper({
      connection: options.connection,
      keys: this.keys,
      commands: this.commands,
      clock: this.clock,
      workerId: this.workerId,
      leaseMs: this.leaseMs,
      logError: (message) => this.logger.error(message),
    });
  }

  /** Listens for aborts first, so no run starts that a cancel could not reach; then takes jobs. */
  async start(): Promise<void> {
    await this.clock.start();
    await this.leases.start();
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
    // A run whose handler finished keeps its claim: its completion is still being sent.
    await this.leases.handBack(this.leases.runs().filter((run) => !run.completing));
    await workersClosed;
    await Promise.all([this.leases.close(), closeRedis(this.bullRedis)]);
    await this.closeConnection();
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
    if (this.graceOver) return this.leases.handBack([run]);
    this.leases.add(run);
    const startedAt = this.clock.now();
    const outcome = await Promise.race([this.invoke(run, claimed.due, timer), handedBack]);
    if (outcome === null || run.released) {
      this.leases.delete(run);
      return;
    }
    // Still active while its completion is sent (retried through an outage): its lease is renewed.
    run.completing = true;
    const { id, key, version, runCount, mode } = run;
    const endedAt = this.clock.now();
    this.observer?.runFinished({
      handler: timer.handler,
      status: outcome.outcome === 'ok' ? 'ok' : 'failed',
      latenessMs: Math.max(0, startedAt - claimed.due),
      durationMs: endedAt - startedAt,
    });
    const followUp = cronFollowUp(claimed.fields, claimed.due, endedAt);
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
    } finally {
      this.leases.delete(run);
    }
  }

  private async invoke(run: ActiveRun, due: number, timer: Timer): Promise<RunOutcome> {
    const handler = this.handlers[timer.handler];
    try {
      if (!handler) throw refusals.unknownHandler(timer.handler, 'worker');
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
}

function earliest(entries: { at: number }[]): number {
  let first = Infinity;
  for (const entry of entries) first = Math.min(first, entry.at);
  return first;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
