import { consoleLogger, OptionReader, refusals, type SundialLogger } from '@sundial/core';
import { Queue } from 'bullmq';
import type { RedisClient } from '../infra/connection';
import { closeRedis, openRedis } from '../infra/connection';
import { throttleErrors } from '../infra/error-throttle';
import { Partitioned, type PartitionedOptions } from '../infra/partitioned';
import { CLOSE_REDIS_WAIT_MS, settledWithin } from '../infra/settled-within';
import { startSubscribeLimitMs, SUBSCRIBER_OPTIONS, Subscription } from '../infra/subscription';
import { type ServeOptions, servedPartitions } from '../infra/served-partitions';
import { startUnlessClosed } from '../infra/start-unless-closed';
import { type DueJob, FireCommands, type FireJobData, type TimerRef } from '../store/fire-commands';
import { DispatchSpans } from '../tracing/fire-spans';
import { DispatcherAnnouncer } from './dispatcher-presence';

export interface DispatcherOptions extends PartitionedOptions, ServeOptions {
  /** timers per fire job (default 100) */
  batchSize?: number;
  /** the safety-net pass, in case a wake was lost (default 1000 ms) */
  pollMs?: number;
  /**
   * how long before their due timers are handed to BullMQ (default 200 ms): the hand-off's round trips
   * and any stall of this process happen before the due, and the worker claims each timer at its due
   */
  leadMs?: number;
  logger?: SundialLogger;
}

const DEFAULT_BATCH_SIZE = 100;
const DEFAULT_POLL_MS = 1000;
/**
 * Timers reach a worker between WAKE_AT_LEAD of it and all of it before their due: that margin must
 * cover a stall of the dispatcher or of the worker's BullMQ consumer (tens of ms on a busy host). On a
 * loaded bench host at 1,000 timers/s, jobs arrived after their due in 5 of 6 runs with a 50 ms margin
 * (the former 100 ms lead, woken at half), 4 of 12 with 100 ms, 2 of 6 with 150 ms (this lead). A
 * reschedule or cancel within the lead finds the timer handed over (its job's claim is then stale), and
 * a job holds a consumer slot that long.
 */
const DEFAULT_LEAD_MS = 200;
/**
 * A pass wakes when the next due is this much of the lead away, so it takes a quarter lead's worth
 * (50 ms, as half of the former 100 ms lead did): at 1,000/s one take-due of ~50 timers holds Redis
 * ~1 ms, where a half lead's 100 held it twice as long for the claims falling due meanwhile.
 */
const WAKE_AT_LEAD = 3 / 4;
/**
 * Take-due calls whose timers one fire job carries at most: a pass's calls (up to `batchSize` timers each)
 * fill one job, added when the pass ends or the job is full. A call stays that small because Redis runs
 * it whole (~10 µs a timer): about a millisecond at most, where calls of 1,000 held it 10–30 ms for the
 * claims falling due meanwhile. Each BullMQ job costs ~35 Redis commands
 * (add, the consumer's fetch and finish, their event-stream entries): at 10,000 timers/s a pass of
 * ~500 timers went as 5 jobs, ~0.3 commands per fired timer (docs/design.md "Commands per fired timer").
 * No call takes more than before, so none holds Redis longer; the job's first timers wait for the
 * pass's later calls (a round trip each) within the lead. The runner claims at most `batchSize` a call.
 */
const CALLS_PER_JOB = 5;

interface PartitionState {
  queue: Queue<FireJobData>;
  /** a pass is running; wakes meanwhile ask for another */
  busy: boolean;
  again: boolean;
  sleep: NodeJS.Timeout | undefined;
}

/** A pass's job still taking timers (take-due extends it), with the spans of its timers. */
interface OpenJob {
  job: DueJob;
  calls: number;
  spans: DispatchSpans[];
  /** the (id, version) of each of its refs (`refName`) */
  refs: Set<string>;
}

/** A ref's (id, version): what a claim tells a run by (a free run handed back is its own version). */
function refName({ id, version }: TimerRef): string {
  return `${id} ${version}`;
}

/**
 * Turns arming intents into BullMQ jobs shortly before their due time (docs/design.md "The fire path").
 * Runs in every scheduler replica with no leader: take-due.lua hands each due timer to exactly one
 * replica. Timers wait as compact rows, not as delayed jobs (late by 50–200 ms and ~770 bytes each); a
 * local timer set to the earliest due (on Redis's clock) less the lead, and a wake channel, make them
 * jobs a lead ahead, and the runner claims each at its due. It hands off the partitions it serves
 * (`serve`, default all).
 */
export class Dispatcher extends Partitioned<FireCommands> {
  private readonly batchSize: number;
  private readonly pollMs: number;
  private readonly leadMs: number;
  private readonly logger: SundialLogger;
  private readonly subscriber: RedisClient;
  private subscription: Subscription | undefined;
  private readonly bullRedis: RedisClient;
  /** the served partitions' states, by partition */
  private readonly states = new Map<number, PartitionState>();
  private readonly passes = new Set<Promise<void>>();
  private readonly announcer: DispatcherAnnouncer;
  private closed = false;
  /** settles when start() ends (or close()): its queues' errors are counted, not logged, until then */
  private endStartHold: () => void = () => undefined;
  private readonly startHold = new Promise<void>((resolve) => (this.endStartHold = resolve));

  constructor(options: DispatcherOptions) {
    const served = servedPartitions(options); // before any connection opens: a bad list changes nothing
    // the safety-net pass is a Node timer: past the longest one it ran every ms
    OptionReader.of('Dispatcher', options, "{ connection: 'redis://127.0.0.1:6379' }").timerMs(
      'pollMs',
      1,
      '1000',
    );
    super(options, (redis, keys) => new FireCommands(redis, keys));
    this.batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
    this.pollMs = options.pollMs ?? DEFAULT_POLL_MS;
    this.leadMs = options.leadMs ?? DEFAULT_LEAD_MS;
    this.logger = options.logger ?? consoleLogger;
    this.subscriber = openRedis(options.connection, SUBSCRIBER_OPTIONS);
    this.bullRedis = openRedis(options.connection, { maxRetriesPerRequest: null });
    this.announcer = new DispatcherAnnouncer(this.redis, this.keys, this.clock, served);
    for (const partition of served) {
      const queue = new Queue<FireJobData>(this.keys.queueName(partition), {
        connection: this.bullRedis,
        prefix: this.keys.bullPrefix,
      });
      // Redis away at boot is said once by the start's wait (wait-for-redis.ts), not by each queue too.
      throttleErrors(queue, 'Sundial dispatcher queue', {
        error: (message) => this.logger.error(message, { partition }),
        info: (message) => this.logger.info(message, { partition }),
      }).holdUntil(this.startHold);
      this.states.set(partition, { queue, busy: false, again: false, sleep: undefined });
    }
  }

  async start(): Promise<void> {
    try {
      await startUnlessClosed(
        () => this.closed,
        () => this.startOnce(),
      );
    } finally {
      this.endStartHold();
    }
  }

  private async startOnce(): Promise<void> {
    await this.prepareStore(this.logger);
    await this.clock.start();
    if (this.closed) throw refusals.closedWhileStarting(); // its subscriber is closed: nothing to subscribe
    const channels = new Map(
      [...this.states.keys()].map((partition) => [this.wakeChannel(partition), partition]),
    );
    this.subscriber.on('message', (channel: string) => {
      const partition = channels.get(channel);
      if (partition !== undefined) this.pass(partition);
    });
    // Kept subscribed for the dispatcher's life; start waits for the first confirmation through a short
    // outage (readiness stays false meanwhile) and fails, saying why, past START_SUBSCRIBE_MS.
    this.subscription = new Subscription(
      this.subscriber,
      [...channels.keys()],
      'its wake channels',
      this.logger,
      this.passAll,
    );
    await this.subscription.confirmedWithin(startSubscribeLimitMs());
    await this.announcer.start();
    // closed meanwhile: a pass now would take due timers after the close
    if (this.closed) throw refusals.closedWhileStarting();
    this.passAll();
    this.redis.on('ready', this.passAll);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.endStartHold();
    this.redis.off('ready', this.passAll);
    for (const state of this.states.values()) clearTimeout(state.sleep);
    this.subscription?.close();
    await closeRedis(this.subscriber);
    // Passes and BullMQ's last writes get CLOSE_REDIS_WAIT_MS, then the connections are dropped: on a
    // frozen Redis they never ended, and the scheduler's shutdown ran into its 15 s cap and exited 1.
    const queues = [...this.states.values()].map((state) => state.queue);
    const ended = Promise.all(this.passes).then(() => Promise.all(queues.map((queue) => queue.close())));
    await settledWithin(ended, CLOSE_REDIS_WAIT_MS);
    await Promise.all([this.closeConnection(), closeRedis(this.bullRedis)]);
  }

  private wakeChannel(partition: number): string {
    return `${this.keys.base(partition)}wake`;
  }

  /**
   * A pass in every partition: at start, and each time the command connection is ready again or the wake
   * channels are subscribed again after an outage. The passes during an outage failed (on a Cluster
   * `Cluster isn't ready` until its client's own 'ready') and the wakes published meanwhile went unheard:
   * without these, what fell due then waited for the safety-net poll (up to `pollMs`, measured up to
   * 2.1 s late after a Cluster outage; docs/design.md "Redis Cluster outages"). Once per reconnect.
   */
  private readonly passAll = (): void => {
    for (const partition of this.states.keys()) this.pass(partition);
  };

  /** One pass at a time per partition; a wake during a pass runs another right after it. */
  private pass(partition: number): void {
    const state = this.states.get(partition)!;
    if (this.closed) return;
    if (state.busy) {
      state.again = true;
      return;
    }
    state.busy = true;
    clearTimeout(state.sleep);
    const pass = this.dispatch(partition, state).finally(() => {
      state.busy = false;
      this.passes.delete(pass);
      if (state.again) this.pass(partition);
    });
    this.passes.add(pass);
  }

  private async dispatch(partition: number, state: PartitionState): Promise<void> {
    let nextDue: number | null = null;
    // The jobs of one take are added while the next take runs (another connection): in a backlog each
    // take costs one round trip, not two — on a busy Redis every round trip waits behind the workers'.
    let adding: Promise<void> = Promise.resolve();
    let open: OpenJob | undefined;
    const add = async (): Promise<void> => {
      if (!open) return;
      const { job, spans } = open;
      open = undefined;
      await adding;
      adding = this.addJob(partition, state.queue, job, spans);
    };
    try {
      do {
        state.again = false;
        const taken = await this.commands.takeDue(partition, this.batchSize, this.leadMs, open?.job.jobId);
        nextDue = taken.nextDue;
        // More is due within the lead than one call takes: go on at once.
        state.again ||= nextDue !== null && nextDue <= taken.now + this.leadMs;
        const { job } = taken;
        const extended = job && open?.job.jobId === job.jobId ? open : undefined;
        // A ref the open job has already is dropped. The job is not in BullMQ until the pass adds it, so
        // when this process stalls past the reconciler's grace between two calls, the reconciler finds
        // the earlier call's hand-off without a job and arms the timer again, and this call takes it
        // again. The one ref covers both hand-offs: each is recorded under this job (take-due's
        // `<jobId>@<ms>`), so the reconciler arms neither again while the job exists, and its claim takes
        // the timer out of `armed` with both `armed` entries (the reconciler kept the first on the row).
        // Named twice, the claim answered the second `stale` (reason status): a wasted ref, a `stale` event.
        if (job && extended) job.timers = job.timers.filter((ref) => !extended.refs.has(refName(ref)));
        const spans = DispatchSpans.start(taken, this.keys.queueName(partition));
        if (job && extended) {
          extended.job.timers.push(...job.timers);
          for (const ref of job.timers) extended.refs.add(refName(ref));
        } else if (job) {
          await add();
          open = { job, calls: 0, spans: [], refs: new Set(job.timers.map(refName)) };
        }
        if (open) {
          open.calls++;
          if (spans) open.spans.push(spans);
          if (open.calls >= CALLS_PER_JOB || !state.again || this.closed) await add();
        }
      } while (state.again && !this.closed);
      // the runners' sign that these partitions are handed off: one round trip every few seconds at most
      this.announcer.announce();
    } catch (error) {
      this.logger.error(`Sundial dispatcher: ${(error as Error).message}`, { partition });
    }
    // a failed take leaves the job taken so far: it goes as it is
    await add();
    await adding;
    if (this.closed) return;
    // Wake when the next due is three quarters of the lead away: each timer is handed over between 3/4 of
    // the lead and the whole lead before its due, and one pass takes about a quarter lead's worth.
    const waitMs =
      nextDue === null
        ? this.pollMs
        : Math.min(this.pollMs, this.clock.msUntil(nextDue) - this.leadMs * WAKE_AT_LEAD);
    // At least 1 ms: should our clock estimate run ahead of Redis, the pass repeats instead of spinning.
    state.sleep = setTimeout(() => this.pass(partition), Math.max(1, waitMs));
  }

  /**
   * One round trip for a job: one script call (addBulk wraps even one job in a MULTI, and each ioredis
   * pipeline copies onto itself every script the connection defines, BullMQ's ~50: ~0.2 ms a job).
   * Should it fail, its timers stay `armed` without a job and the reconciler re-arms them.
   */
  private async addJob(
    partition: number,
    queue: Queue<FireJobData>,
    { jobId, timers }: DueJob,
    spans: DispatchSpans[],
  ): Promise<void> {
    try {
      // `timestamp` on Redis's clock, not this host's: the runners' consumer watchdog tells a stuck
      // consumer by how long a job waited, read against Redis's TIME (consumer-watchdog.ts)
      const timestamp = this.clock.now();
      await queue.add('fire', { timers }, { jobId, removeOnComplete: true, removeOnFail: true, timestamp });
      for (const span of spans) span.end();
    } catch (error) {
      for (const span of spans) span.end(error as Error);
      const keys = timers.map((timer) => timer.key);
      this.logger.error(`Sundial dispatcher could not add fire jobs: ${(error as Error).message}`, {
        partition,
        keys,
      });
    }
  }
}
