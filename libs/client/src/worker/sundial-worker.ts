import {
  type BeforeApplicationShutdown,
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  Optional,
} from '@nestjs/common';
import { refusals } from '@sundial/core';
import type { Queue } from 'bullmq';
import {
  type Backlog,
  CLOSE_REDIS_WAIT_MS,
  DEFAULT_CLOSE_GRACE_MS,
  type Dispatcher,
  type Reconciler,
  settledWithin,
  type SundialMetrics,
  type TimerRunner,
} from '@sundial/redis';
import type { SundialWorkerModuleOptions } from './sundial-worker-options';
import { FIRE_RUNNER, type FireProcessor } from './fire-processor';
import { DATA_WATCH, type DataWatch } from './data-watch';
import { START_HOLD, type StartHold } from './start-hold';
import { SIGTERM_CHECK, type SigtermCheck } from './sigterm-check';
import { HELD_CONNECTIONS, type HeldConnections } from './held-connections';
import { OwnRunner } from '../own-runner';

/** How long the configKey connection's check waits for an answer before it leaves the connection be. */
const SHARED_CHECK_MS = 5000;

export const SUNDIAL_WORKER_OPTIONS = Symbol('sundial:worker-options');
export const FIRE_PROCESSORS = Symbol('sundial:fire-processors');
export const FIRE_LOOPS = Symbol('sundial:fire-loops');
export const FIRE_QUEUES = Symbol('sundial:fire-queues');

/**
 * The dispatcher and reconciler a worker runs with `dispatch: true`, and the backlog its metrics read:
 * made (their connections opened) when first used, at the worker's start; the metrics from the boot.
 */
export class FireLoops {
  private loops: { dispatcher: Dispatcher; reconciler: Reconciler; backlog: Backlog } | undefined;

  constructor(
    readonly metrics: SundialMetrics,
    private readonly make: () => { dispatcher: Dispatcher; reconciler: Reconciler; backlog: Backlog },
  ) {}

  get dispatcher(): Dispatcher {
    return this.made().dispatcher;
  }

  get reconciler(): Reconciler {
    return this.made().reconciler;
  }

  get backlog(): Backlog {
    return this.made().backlog;
  }

  /** Closes what was made: a worker never started opened none. */
  async close(): Promise<void> {
    if (!this.loops) return;
    const { backlog, reconciler, dispatcher } = this.loops;
    await backlog.close();
    await reconciler.close();
    await dispatcher.close();
  }

  private made(): { dispatcher: Dispatcher; reconciler: Reconciler; backlog: Backlog } {
    this.loops ??= this.make();
    return this.loops;
  }
}

/**
 * The app service of `SundialWorkerModule` (docs/spec.md §4.6, §5.1): hands the @nestjs/bullmq workers to
 * the TimerRunner and starts it with the app; at shutdown takes no more jobs and lets running handlers
 * finish within the grace before their signals abort. Injectable as `SundialWorker`.
 */
@Injectable()
export class SundialWorker implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Sundial');
  private started: Promise<void> | undefined;
  private stopped: Promise<void> | undefined;
  private running = false;
  private untrackBacklog = (): void => undefined;
  private stopDataWatch = (): Promise<void> => Promise.resolve();
  private disarmSigtermCheck = (): void => undefined;
  private readonly own: OwnRunner;

  constructor(
    @Inject(FIRE_RUNNER) private readonly runner: TimerRunner,
    @Inject(FIRE_PROCESSORS) private readonly processors: FireProcessor[],
    @Inject(FIRE_LOOPS) private readonly loops: FireLoops | null,
    @Inject(SUNDIAL_WORKER_OPTIONS) private readonly options: SundialWorkerModuleOptions,
    @Inject(DATA_WATCH) private readonly dataWatch: DataWatch,
    @Inject(FIRE_QUEUES) private readonly queues: Queue[],
    @Inject(START_HOLD) private readonly hold: StartHold,
    @Inject(SIGTERM_CHECK) private readonly sigtermCheck: SigtermCheck,
    @Inject(HELD_CONNECTIONS) private readonly held: HeldConnections,
    // absent only without SundialModule, which the runner's provider refuses first
    @Optional() @Inject(OwnRunner) own: OwnRunner | null,
  ) {
    this.own = own ?? new OwnRunner();
  }

  get workerId(): string {
    return this.runner.workerId;
  }

  /**
   * Its runner's estimate of Redis now (epoch ms, docs/spec.md §4.4), measured at start and every 60 s:
   * apps/worker's `Sundial-Now` header. Before start, this process's clock.
   */
  redisNow(): number {
    return this.runner.redisNow();
  }

  /** 'running' from the end of start() to the beginning of stop() */
  get state(): 'idle' | 'running' | 'stopping' {
    if (this.stopped) return 'stopping';
    return this.running ? 'running' : 'idle';
  }

  async onApplicationBootstrap(): Promise<void> {
    if (this.options.autoStart !== false) await this.start();
  }

  async beforeApplicationShutdown(): Promise<void> {
    if (this.options.autoStart !== false) await this.stop();
  }

  start(): Promise<void> {
    this.started ??= this.startOnce().finally(() => this.hold.end());
    return this.started;
  }

  /** Drains: running handlers get the shutdown grace, then their signals abort and claims go back. */
  stop(): Promise<void> {
    this.hold.end(); // never started (autoStart: false): its connections' errors are said from now
    this.disarmSigtermCheck(); // closed by the app (an e2e test's app.close()), not killed by a signal
    this.stopped ??= this.stopOnce();
    return this.stopped;
  }

  private async startOnce(): Promise<void> {
    // BullMQ's fire queue and worker connections, made with the module and held shut until now
    this.held.open();
    for (const processor of this.processors) this.runner.attachConsumer(processor.worker);
    // then the registrar's boot pass, if it waited for this start: its rows written once the runner
    // announced their handlers, the start (and the app's init) ends with them written
    // (not before the configKey connection was checked: a replica whose boot fails writes no row)
    await this.own.startWith(async () => {
      await this.runner.start();
      await this.checkSharedConnection();
    });
    // Redis losing the timers is said, counted, and the @DistributedCron rows written again (data-watch.ts);
    // a loss just after the start too: its first look is done before the start ends.
    const stopDataWatch = await this.dataWatch();
    this.stopDataWatch = stopDataWatch;
    if (this.stopped) {
      await stopDataWatch(); // stopped meanwhile: its stop closed no watch
      throw refusals.closedWhileStarting();
    }
    if (this.loops) {
      await this.loops.dispatcher.start();
      // Stopped meanwhile: its stop closed the reconciler and the backlog before this start reached them
      // (the dispatcher's start ended before its close, which it waits for): a reconciler started now would
      // pass after the stop, and the backlog's gauges, tracked now, would stay on the registry.
      if (this.stopped) throw refusals.closedWhileStarting();
      this.loops.reconciler.start();
      this.untrackBacklog = this.loops.metrics.trackBacklog(this.loops.backlog);
    }
    this.running = true;
    this.logger.log(`worker ${this.runner.workerId} takes fire jobs`);
    // Fire jobs taken from now: a SIGTERM nothing handles would cut their runs off (sigterm-check.ts).
    if (!this.stopped) this.disarmSigtermCheck = this.sigtermCheck(this.runner.workerId);
  }

  /**
   * With `configKey` the fire queues' workers connect as the user's BullModule config says: they must
   * reach the Redis and database of SundialModule's connection, where runner.start() just wrote the
   * partition count. One that reaches another would take no fire job, silently until the consumer
   * watchdog replaces it. A connection with no answer in time, or an error, is left to its own outage
   * lines: only a Redis that answers without the count is another one.
   */
  private async checkSharedConnection(): Promise<void> {
    const [processor] = this.processors;
    if (this.options.configKey === undefined || !processor) return;
    const found = (async () => {
      const client = await processor.worker.getBackend().client;
      return client.get(this.runner.keys.partitionCount);
    })().catch(() => 'unknown' as const);
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>(
      (resolve) => (timer = setTimeout(() => resolve('late'), SHARED_CHECK_MS)),
    );
    const count = await Promise.race([found, late]).finally(() => clearTimeout(timer));
    if (count === null) throw refusals.configKeyElsewhere(this.options.configKey);
  }

  private async stopOnce(): Promise<void> {
    if (this.loops) {
      this.untrackBacklog();
      await this.loops.close();
    }
    // The watch's connection closes beside the drain, not before it: the grace is the handlers'.
    const grace = this.options.shutdownGraceMs ?? DEFAULT_CLOSE_GRACE_MS;
    await Promise.all([this.runner.close(grace), this.stopDataWatch(), this.closeQueues()]);
    // The client BullMQ was given, which it leaves open, only now: it is the fire Workers' own main
    // connection (BullMQ duplicates only their blocking one), which their lock renewals and stalled checks
    // use until the runner's close has waited for their running jobs. Closed beside the drain, every tick
    // of those during the grace failed, logged as errors at a clean shutdown.
    await this.held.close();
  }

  /**
   * @nestjs/bullmq closes the fire queues (this module's registrations: no job is added through them)
   * after this, with a QUIT that a frozen Redis never answers: the worker's shutdown ran into its cap and
   * exited 1. Closed here, and dropped when Redis does not answer within CLOSE_REDIS_WAIT_MS.
   */
  private async closeQueues(): Promise<void> {
    const closed = Promise.all(this.queues.map((queue) => queue.close()));
    if (!(await settledWithin(closed, CLOSE_REDIS_WAIT_MS))) {
      await Promise.all(this.queues.map((queue) => queue.disconnect().catch(() => undefined)));
    }
  }
}
