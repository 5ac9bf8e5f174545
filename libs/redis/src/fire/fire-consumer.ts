import { type Job, Worker } from 'bullmq';
import { refusals } from '@sundial/core';
import { closeRedis, openRedis, type RedisClient, type RedisConnection } from '../infra/connection';
import type { FireJobData } from '../store/fire-commands';
import { ConsumerWatchdog } from './consumer-watchdog';
import { FinishedJobs } from './finished-jobs';
import { isBullWorker, TakenJobs } from './taken-jobs';
import { watchFireWorkerErrors } from './fire-worker-errors';
import { SundialKeys } from '../store/keys';
import { DEFAULT_CONCURRENCY, DEFAULT_LEASE_MS } from '../option-defaults';

/** A partition queue's job consumer (a BullMQ Worker), started once the runner listens for aborts. */
export interface FireJobConsumer {
  /** its queue's name (a BullMQ Worker's `name`): which partition it consumes */
  readonly name: string;
  run(): Promise<unknown>;
  waitUntilReady(): Promise<unknown>;
  close(): Promise<void>;
  /** drops its connections at once (a close that Redis did not let finish) */
  disconnect(): Promise<void>;
  /** a BullMQ Worker's events: a job's finish answered (FinishedJobs; a consumer without them is not watched) */
  on?(event: 'completed' | 'failed', listener: (job: Job | undefined) => void): unknown;
}

/**
 * Who consumes the partition queues: `'own'` — the runner makes a BullMQ Worker per partition;
 * `'external'` — the host makes them (e.g. @nestjs/bullmq processors, with `fireConsumerOptions()` and
 * `autorun: false`), hands each job to `TimerRunner.processFireJob` and each Worker to `attachConsumer`.
 */
export type FireConsumersMode = 'own' | 'external';

/** The BullMQ Worker settings of a partition queue's consumer, whoever creates it (the runner or a host). */
export interface FireConsumerOptions {
  prefix: string;
  concurrency: number;
  lockDuration: number;
  stalledInterval: number;
}

export function fireConsumerOptions(options: {
  prefix?: string;
  partitions?: number;
  concurrency?: number;
  leaseMs?: number;
}): FireConsumerOptions {
  const leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
  return {
    prefix: new SundialKeys(options.prefix, options.partitions).bullPrefix,
    concurrency: options.concurrency ?? DEFAULT_CONCURRENCY,
    // BullMQ renews its lock every lockDuration / 2, so with twice the lease a dead worker's job
    // comes back (stalled check) only once its lease has expired too, and the claim takes it over.
    lockDuration: 2 * leaseMs,
    stalledInterval: leaseMs,
  };
}

export type FireJobProcessor = (partition: number, data: FireJobData) => Promise<void>;

export interface FireConsumersOptions {
  mode: FireConsumersMode;
  connection: RedisConnection;
  keys: SundialKeys;
  /** the partitions whose queues are consumed (the runner's `serve`) */
  partitions: readonly number[];
  settings: FireConsumerOptions;
  /** the runner's command connection, for the watchdog's reads */
  redis: RedisClient;
  /** see DEFAULT_CONSUMER_STALL_MS */
  stallMs: number;
  /** a stuck consumer was closed and made anew (counted in sundial_fire_consumers_recreated_total) */
  onRecreated(partition: number): void;
  logError(message: string): void;
  /** fire jobs whose finish a reconnect found lost, finished again (finished-jobs.ts) */
  logWarn(message: string, fields: Record<string, unknown>): void;
  /** a consumer's connection answers again after errors (error-throttle.ts) */
  logInfo(message: string): void;
}

/**
 * The TimerRunner's partition queue consumers: its own BullMQ Workers, or those a host attached; a
 * ConsumerWatchdog replaces one that stopped taking jobs with a Worker of the runner's own, on a
 * connection of its own (the stuck one's may be what is broken).
 */
export class FireConsumers {
  private readonly consumers = new Map<number, FireJobConsumer>();
  /**
   * replaced consumers whose close has not settled yet, closed with the rest; one whose close settled is
   * forgotten (each replacement, after a failover, left one here for the process's life)
   */
  private readonly retired = new Set<FireJobConsumer>();
  /** the BullMQ connections the runner opened and has not closed (BullMQ never closes a connection it was given) */
  private readonly connections: RedisClient[] = [];
  /**
   * the connection each Worker the runner made is on: `start`'s one for every partition, a replacement's
   * its own; a connection is closed once no Worker is left on it (at most one per partition and one shared)
   */
  private readonly connectionOf = new Map<FireJobConsumer, RedisClient>();
  private readonly watchdog: ConsumerWatchdog;
  private readonly finishes: FinishedJobs;
  private readonly takes: TakenJobs;
  private process: FireJobProcessor | undefined;
  /** closing or closed: a watchdog check still under way replaces no consumer */
  private closing = false;

  constructor(private readonly options: FireConsumersOptions) {
    this.watchdog = new ConsumerWatchdog({
      redis: options.redis,
      keys: options.keys,
      partitions: options.partitions,
      stallMs: options.stallMs,
      concurrency: options.settings.concurrency,
      recreate: (partition) => this.recreate(partition),
      logError: options.logError,
      logInfo: options.logInfo,
    });
    this.finishes = new FinishedJobs({
      redis: options.redis,
      onFinishedAgain: (jobs) =>
        options.logWarn(
          `Sundial runner: ${jobs} fire jobs it had finished were still active on the Redis it reconnected to (their finish was lost, e.g. with the old primary of a Sentinel failover): finished again, the reconciler re-arms the timers they had not claimed there`,
          { jobs },
        ),
      logError: (message) => options.logError(`Sundial runner: ${message}`),
    });
    this.takes = new TakenJobs({
      onPutBack: (jobs) =>
        options.logWarn(
          `Sundial runner: ${jobs} fire jobs a consumer had taken when its connection dropped never reached it (the take's reply was lost): put back to wait, where the next worker takes them at once (BullMQ's stalled check would hand them on two to three leases later)`,
          { jobs },
        ),
      logError: (message) => options.logError(`Sundial runner: ${message}`),
    });
  }

  attach(consumer: FireJobConsumer): void {
    if (this.options.mode !== 'external') {
      throw new Error("attachConsumer needs a TimerRunner made with consumers: 'external'");
    }
    const { keys, partitions } = this.options;
    const partition = partitions.find((p) => keys.queueName(p) === consumer.name);
    if (partition === undefined)
      throw new Error(`no partition of this runner has the queue ${consumer.name}`);
    this.consumers.set(partition, consumer);
    this.watchJobs(consumer);
  }

  /** Starts taking jobs; resolves once every consumer is connected (readiness waits for it). */
  async start(process: FireJobProcessor): Promise<void> {
    this.process = process;
    if (this.options.mode === 'own') {
      const connection = this.openConnection();
      for (const partition of this.options.partitions)
        this.consumers.set(partition, this.own(partition, connection));
    }
    // An external consumer's run() resolves only when it closes: only its start is ours to wait for.
    else for (const consumer of this.consumers.values()) void consumer.run();
    await Promise.all([...this.consumers.values()].map((consumer) => consumer.waitUntilReady()));
    // closed meanwhile: a watchdog started now would check (and keep the process up) for ever
    if (this.closing) throw refusals.closedWhileStarting();
    this.watchdog.start();
  }

  /** The runner took a job of `partition` (whoever's consumer handed it over); `done` settles with it. */
  taken(partition: number, done: Promise<unknown>): void {
    this.watchdog.taken(partition, done);
  }

  /** Takes no more jobs; resolves once the consumers are closed (their running jobs settled). */
  async close(): Promise<void> {
    this.closing = true;
    this.watchdog.stop();
    this.finishes.stop();
    this.takes.stop();
    await Promise.all(this.all().map((consumer) => consumer.close()));
    await Promise.all(this.connections.map((connection) => closeRedis(connection)));
  }

  /**
   * Drops every consumer connection, for a close that Redis did not answer: BullMQ's last writes (the
   * job's completion, its lock) would otherwise be retried for as long as Redis stays away, and its
   * blocking connection would go on reconnecting. The jobs' locks then expire and the stalled check
   * hands them to another worker; the claims expire with their leases.
   */
  async disconnect(): Promise<void> {
    this.closing = true;
    for (const connection of this.connections) connection.disconnect();
    await Promise.all(this.all().map((consumer) => consumer.disconnect().catch(() => undefined)));
  }

  private watchJobs(consumer: FireJobConsumer): void {
    const finished = (job: Job | undefined) => this.finishes.finished(job);
    consumer.on?.('completed', finished);
    consumer.on?.('failed', finished);
    if (isBullWorker(consumer)) this.takes.watch(consumer);
  }

  private all(): FireJobConsumer[] {
    return [...this.consumers.values(), ...this.retired];
  }

  private async recreate(partition: number): Promise<void> {
    const stuck = this.consumers.get(partition);
    // A check that read Redis before the close and decides after it: the consumers to close were those
    // of the close's start, and a Worker made now would take jobs, its connections open, after it.
    if (!stuck || !this.process || this.closing) return;
    const fresh = this.own(partition, this.openConnection());
    this.consumers.set(partition, fresh);
    this.retired.add(stuck);
    // Its jobs in flight may still finish; a stuck close is bounded by the runner's close.
    void stuck
      .close()
      .catch(() => undefined)
      .then(() => this.forget(stuck));
    this.options.logError(
      `Sundial runner, partition ${partition}: its fire-job consumer took no job for ${this.options.stallMs} ms while jobs waited longer; closed and made anew`,
    );
    this.options.onRecreated(partition);
    await fresh.waitUntilReady();
  }

  /**
   * A replaced consumer's close settled: it is dropped, and so is its connection once no Worker is left
   * on it. Else every replacement kept a Redis connection open (and its client's reconnects going) until
   * the runner closed: weeks of failovers, one more each. Closing, the runner's close closes what is left.
   */
  private forget(stuck: FireJobConsumer): void {
    this.retired.delete(stuck);
    const connection = this.connectionOf.get(stuck);
    this.connectionOf.delete(stuck);
    if (!connection || this.closing || [...this.connectionOf.values()].includes(connection)) return;
    // left in `connections` until it is closed: a runner's close meanwhile waits for it too
    void closeRedis(connection).finally(() => {
      const at = this.connections.indexOf(connection);
      if (at >= 0) this.connections.splice(at, 1);
    });
  }

  private openConnection(): RedisClient {
    const connection = openRedis(this.options.connection, { maxRetriesPerRequest: null });
    this.connections.push(connection);
    return connection;
  }

  private own(partition: number, connection: RedisClient): FireJobConsumer {
    const { keys, settings, logError, logWarn, logInfo } = this.options;
    const process = this.process!;
    const worker = new Worker<FireJobData>(keys.queueName(partition), (job) => process(partition, job.data), {
      connection,
      ...settings,
    });
    watchFireWorkerErrors(worker, `Sundial runner, partition ${partition}`, {
      error: logError,
      warn: (message) => logWarn(message, { partition }),
      info: logInfo,
    });
    this.watchJobs(worker);
    this.connectionOf.set(worker, connection);
    return worker;
  }
}
