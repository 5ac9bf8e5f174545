import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { consoleLogger, refusals, type SundialLogger, type TimerHandler } from '@sundial/core';
import { closeRedis, duplicateRedis, type RedisClient } from '../infra/connection';
import { Partitioned } from '../infra/partitioned';
import { CLOSE_REDIS_WAIT_MS, settledWithin } from '../infra/settled-within';
import { startUnlessClosed } from '../infra/start-unless-closed';
import { FireCommands, type FireJobData, type TimerRef } from '../store/fire-commands';
import type { SundialObserver } from '../metrics/observer';
import { RESEND_MEMORY_MS } from '../store/requests';
import { defineCommands } from '../store/script-loader';
import { inRunContext, RunSpan } from '../tracing/fire-spans';
import { canRide, RidingClaims } from './claim-rides';
import { type ClaimSlotContext, detachAtClaim } from './claim-slots';
import { DEFAULT_CLOSE_GRACE_MS, DROP_WAIT_MS } from './close-waits';
import { CompletionBatcher } from './completion-batcher';
import { DEFAULT_CONSUMER_STALL_MS } from './consumer-watchdog';
import { DispatcherPresenceWatch } from './dispatcher-presence-watch';
import { HandlerPresence } from './handler-presence';
import { PassedTimers } from './passed-timers';
import { claimAtDue } from './due-claims';
import { FireConsumers, fireConsumerOptions, type FireJobConsumer } from './fire-consumer';
import { DEFAULT_LEASE_MS } from '../option-defaults';
import { InFlightJobs } from './in-flight-jobs';
import { LateEnds } from './late-ends';
import { LeaseKeeper } from './lease-keeper';
import { RunCompletions } from './run-completions';
import { RunReports, type RunFields, type RunOutcome } from './run-reports';
import {
  attemptOf,
  type Claimed,
  freeRunSkips,
  invokeHandler,
  latenessFrom,
  startRun,
  untilEnded,
} from './run-start';
import { type ClaimTimes, publishRunTiming, runTimings } from './run-timing';
import { RedisTicks } from './redis-ticks';
import { checkRunnerOptions, type TimerRunnerOptions } from './timer-runner-options';

export type { TimerRunnerOptions } from './timer-runner-options';
export { DEFAULT_CLOSE_GRACE_MS } from './close-waits';

/** How many leases long Redis remembers a completion's answer (a retried batch answers as its first try). */
const COMPLETION_MEMORY_LEASES = 4;

/**
 * Runs due timers (docs/design.md "The fire path", docs/spec.md §3.2, §3.8, §4.5, §4.6): one BullMQ worker per
 * partition queue it serves (`serve`, default all); each fire job is claimed in one call, its handlers run with a lease renewed while
 * they go on, and their outcomes are completed in batches. Every process may run one; there is no leader.
 */
export class TimerRunner extends Partitioned<FireCommands> {
  readonly workerId: string;
  private readonly handlers: Record<string, TimerHandler>;
  private readonly leaseMs: number;
  private readonly claimAheadMs: number;
  private readonly logger: SundialLogger;
  private readonly reports: RunReports;
  private readonly consumers: FireConsumers;
  private readonly observer: SundialObserver;
  /** the partitions whose fire queues this runner consumes */
  private readonly served: readonly number[];
  private readonly batcher: CompletionBatcher;
  private readonly leases: LeaseKeeper;
  private readonly completions: RunCompletions;
  private readonly slots: ClaimSlotContext;
  /**
   * Claims have a connection of their own: a claim is due to the millisecond, and on the command connection
   * it would wait behind a completion batch, a lease renewal or a watchdog read sent before it (one connection
   * is answered in order). Opened beside start(): no connection opens before it (lazyConnect, spec §5.1).
   */
  private readonly claimRedis: RedisClient;
  private readonly claims: RidingClaims;
  private readonly jobs = new InFlightJobs();
  private readonly lateEnds = new LateEnds();
  private closing: Promise<void> | undefined;
  private graceOver = false;
  private consumed = false; // told its observer it consumes (sundial_fire_consumers): its close tells it stopped
  private readonly ticks = new RedisTicks();
  private readonly dispatchers: DispatcherPresenceWatch;
  /** which handlers a live worker of a partition has that this one lacks; their timers are passed on */
  private readonly presence: HandlerPresence;
  private readonly passed: PassedTimers;

  constructor(options: TimerRunnerOptions) {
    const { served, claimAheadMs, dispatcherGraceMs } = checkRunnerOptions(options); // before any connection
    super(options, (redis, keys) => new FireCommands(redis, keys), { lazyConnect: true });
    this.claimAheadMs = claimAheadMs;
    this.handlers = options.handlers;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.workerId = options.workerId ?? `${hostname()}-${process.pid}-${randomUUID().slice(0, 8)}`;
    this.logger = options.logger ?? consoleLogger;
    this.reports = new RunReports(this.logger, options.observer ?? {}, options.handlers);
    this.slots = {
      commands: this.commands,
      workerId: this.workerId,
      reports: this.reports,
      logger: this.logger,
    };
    this.claimRedis = duplicateRedis(this.redis);
    defineCommands(this.claimRedis);
    const observer = (this.observer = options.observer ?? {});
    this.served = served;
    this.consumers = new FireConsumers({
      mode: options.consumers ?? 'own',
      connection: options.connection,
      keys: this.keys,
      partitions: served,
      settings: fireConsumerOptions(options),
      redis: this.redis,
      stallMs: options.consumerStallMs ?? DEFAULT_CONSUMER_STALL_MS,
      onRecreated: (partition) => observer.consumerRecreated?.({ partition }),
      logError: (message) => this.logger.error(message, { workerId: this.workerId }),
      logWarn: (message, fields) => this.logger.warn(message, { workerId: this.workerId, ...fields }),
      logInfo: (message) => this.logger.info(message, { workerId: this.workerId }),
    });
    this.batcher = new CompletionBatcher(this.commands, {
      // A completion is retried while the worker renews its lease: remember its answer for a few leases.
      memoryMs: Math.max(RESEND_MEMORY_MS, COMPLETION_MEMORY_LEASES * this.leaseMs),
      keepTrying: () => !this.graceOver,
      rides: canRide(this.claimRedis),
    });
    this.claims = new RidingClaims(
      this.claimRedis,
      new FireCommands(this.claimRedis, this.keys),
      this.batcher,
    );
    this.leases = new LeaseKeeper({
      connection: options.connection,
      keys: this.keys,
      commands: this.commands,
      clock: this.clock,
      workerId: this.workerId,
      leaseMs: this.leaseMs,
      logger: this.logger,
      observer,
      onHandlersAnnounced: () => this.presence.othersAnnounced(),
    });
    this.dispatchers = new DispatcherPresenceWatch({
      redis: this.redis,
      keys: this.keys,
      logger: this.logger,
      clock: this.clock,
      graceMs: dispatcherGraceMs,
      context: options.consumers ?? 'own',
      fields: { workerId: this.workerId },
    });
    const routing = { keys: this.keys, logger: this.logger, fields: { workerId: this.workerId } };
    this.presence = new HandlerPresence({
      ...routing,
      redis: this.redis,
      clock: this.clock,
      partitions: served,
      handlers: options.handlers,
    });
    this.passed = new PassedTimers({ ...routing, clock: this.clock, connection: options.connection });
    this.completions = new RunCompletions({
      batcher: this.batcher,
      reports: this.reports,
      leases: this.leases,
      clock: this.clock,
      logger: this.logger,
      leaseMs: this.leaseMs,
      workerId: this.workerId,
    });
  }

  /** Listens for aborts first, so no run starts that a cancel could not reach; then takes jobs. */
  start(): Promise<void> {
    return startUnlessClosed(
      () => this.closing !== undefined,
      () => this.startOnce(),
    );
  }

  private async startOnce(): Promise<void> {
    await this.prepareStore(this.logger);
    if (this.claimRedis.status === 'wait') this.claimRedis.connect().catch(() => undefined);
    await this.clock.start();
    await this.leases.start();
    // before the first job: a lacking runner passes its timers on from the start
    await this.presence.start();
    // closed meanwhile: consumers made now would outlive the close and keep the process up
    if (this.closing) throw refusals.closedWhileStarting();
    await this.consumers.start((partition, data) => this.processFireJob(partition, data));
    this.observer.consuming?.({ partitions: this.served, on: true });
    this.consumed = true;
    this.dispatchers.start();
  }

  /**
   * Resolves at the first announcement of its handlers Redis took (others told on `P:handlers:new`): from
   * then on older workers pass their runs on (docs/spec.md §3.2); an app's cron rows wait for it (§5.1).
   */
  get handlersAnnounced(): Promise<void> {
    return this.presence.announced;
  }

  /** With `consumers: 'external'`: a consumer to start once the runner listens, and to stop at close. */
  attachConsumer(consumer: FireJobConsumer): void {
    this.consumers.attach(consumer);
  }

  /** One fire job of `partition`'s queue, as a consumer hands it over (`job.data`). */
  processFireJob(partition: number, data: FireJobData): Promise<void> {
    const job = this.jobs.track(this.fire(partition, data.timers));
    this.consumers.taken(partition, job);
    return job;
  }

  /**
   * Graceful stop (docs/spec.md §4.6): take no more jobs, let running handlers finish for up to `graceMs`, then
   * abort the rest and hand their claims back (at-least-once: they run again elsewhere; at-most-once:
   * recorded lost), and close every connection.
   */
  close(graceMs = DEFAULT_CLOSE_GRACE_MS): Promise<void> {
    this.closing ??= this.shutdown(graceMs);
    return this.closing;
  }

  private async shutdown(graceMs: number): Promise<void> {
    // only after its `on`: a runner closed before it consumed must not end another runner's count
    if (this.consumed) this.observer.consuming?.({ partitions: this.served, on: false });
    this.dispatchers.stop();
    // (its announcements are left to expire: another worker may announce the same handlers)
    this.presence.stop();
    const consumersClosed = this.consumers.close();
    await settledWithin(this.jobs.drained(consumersClosed), graceMs);
    this.graceOver = true;
    // A run whose handler finished keeps its claim: its completion is still being sent.
    const handedBack = this.leases.handBack(this.leases.runs().filter((run) => !run.completing));
    // then the ends of handlers that outlived their hand-back, stale (late-ends.ts), if Redis took it
    const lateSent = handedBack.then((released) => (released ? this.lateEnds.send() : this.lateEnds.close()));
    // Redis away: the hand-back and BullMQ's last writes wait a bounded time, then the connections drop.
    let consumersDropped: Promise<void> | undefined;
    if (!(await settledWithin(Promise.all([lateSent, consumersClosed]), CLOSE_REDIS_WAIT_MS))) {
      this.logger.error(
        `Sundial runner: Redis did not answer within ${CLOSE_REDIS_WAIT_MS} ms at close; claims not completed or released expire with their leases and the reconciler settles them`,
        { workerId: this.workerId },
      );
      consumersDropped = this.consumers.disconnect();
    }
    this.lateEnds.close();
    await Promise.all([
      consumersDropped && settledWithin(consumersDropped, DROP_WAIT_MS),
      this.leases.close(),
      settledWithin(this.passed.close(), DROP_WAIT_MS),
      closeRedis(this.claimRedis),
      this.closeConnection(),
    ]);
  }

  /**
   * One fire job: its timers claimed as they fall due (claimAtDue), and what was claimed run at once.
   * Closing: timers falling due during the grace are still claimed and run (they are this job's); once
   * the grace is over the unclaimed rest stays armed without a job, and the reconciler arms it again.
   */
  private async fire(partition: number, refs: TimerRef[]): Promise<void> {
    const runs: Promise<void>[] = [];
    try {
      await claimAtDue(refs, {
        partition,
        claims: this.claims,
        flight: this.batcher.flight,
        slots: this.slots,
        clock: this.clock,
        leaseMs: this.leaseMs,
        aheadMs: this.claimAheadMs,
        stopped: () => this.graceOver,
        lacking: this.presence.lacking(partition),
        settle: (result, ref, times, calls) => {
          if (result.kind === 'claimed') {
            // a dead worker's at-least-once run, taken over by this claim: counted as a requeue
            if (result.requeued) this.reports.workerLost('requeued');
            runs.push(this.run(partition, result, ref, times, calls));
          }
          if (result.kind === 'lost') runs.push(this.completions.settleLost(partition, result.fields));
          if (result.kind === 'stale') this.reports.staleAtClaim(partition, ref, result.reason);
          if (result.kind === 'passed') this.passed.pass(partition, result.jobId, ref);
        },
      });
    } finally {
      // Even when a later claim fails, the runs already started belong to this job.
      await Promise.all(runs);
    }
  }

  private async run(
    partition: number,
    claimed: Claimed,
    ref: TimerRef,
    times: ClaimTimes,
    claimCalls: number,
  ): Promise<void> {
    const run = startRun(partition, claimed);
    if (this.graceOver) return void (await this.leases.handBack([run]));
    const fields: RunFields = {
      key: run.key,
      id: run.id,
      version: run.version,
      partition,
      handler: claimed.fields.h,
    };
    // A free tick armed its next one at claim, past the grid slots it missed (claim.lua's 'skipped' event;
    // a re-run's were counted at its first claim).
    if (claimed.mode === 'free' && !claimed.rerun) this.reports.skips(freeRunSkips(claimed), fields);
    const detaching = detachAtClaim(this.slots, run, claimed, fields);
    if (detaching) await detaching;
    // Leased (renewed, reached by aborts) from here, also while it waits for its due.
    this.leases.add(run);
    // Claimed ahead: not before its due by Redis's clock, as the claims' answers bound it.
    const due = this.ticks.untilDue(partition, claimed, times);
    if (due) await due;
    // handed back by a close whose grace ended during that wait: released, never started
    if (run.released) {
      this.leases.delete(run);
      return;
    }
    const startedAt = this.clock.now();
    const latenessMs = Math.max(0, startedAt - latenessFrom(claimed));
    if (runTimings.hasSubscribers) publishRunTiming(run.key, claimed, times, claimCalls);
    const span = RunSpan.start(claimed.fields, claimed.due, ref.tp, times, latenessMs);
    const attempt = attemptOf(claimed);
    const { handlers } = this;
    const handled = inRunContext(span, () => invokeHandler(handlers, run, claimed, attempt));
    const outcome = handled instanceof Promise ? await untilEnded(run, handled) : handled;
    if (outcome === null || run.released) {
      span?.end(outcome);
      this.leases.delete(run);
      const late = (ended: RunOutcome) =>
        this.completions.complete(partition, run, claimed, ended, fields, latenessMs, startedAt);
      return this.lateEnds.watch(handled, late); // handed back: how its handler ends is still told
    }
    // The span ends when the handler did, saying what the completion recorded (a stale one: nothing).
    const handlerEnd = span && Date.now();
    const stale = await this.completions.complete(
      partition,
      run,
      claimed,
      outcome,
      fields,
      latenessMs,
      startedAt,
    );
    span?.end(outcome, stale, handlerEnd);
  }
}
