import { Worker } from 'bullmq';
import { closeRedis, openRedis, type RedisClient, type RedisConnection } from '../infra/connection';
import type { FireJobData } from '../store/fire-commands';
import { SundialKeys } from '../store/keys';

/** How long a claim outlives a silent worker (SUNDIAL_LEASE_MS). */
export const DEFAULT_LEASE_MS = 30_000;
/** Fire jobs in flight per partition queue (WORKER_CONCURRENCY). */
export const DEFAULT_CONCURRENCY = 16;

/** A partition queue's job consumer (a BullMQ Worker), started once the runner listens for aborts. */
export interface FireJobConsumer {
  run(): Promise<unknown>;
  waitUntilReady(): Promise<unknown>;
  close(): Promise<void>;
  /** drops its connections at once (a close that Redis did not let finish) */
  disconnect(): Promise<void>;
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
  settings: FireConsumerOptions;
  logError(message: string): void;
}

/** The TimerRunner's partition queue consumers: its own BullMQ Workers, or those a host attached. */
export class FireConsumers {
  private readonly bullRedis: RedisClient | undefined;
  private consumers: FireJobConsumer[] = [];

  constructor(private readonly options: FireConsumersOptions) {
    this.bullRedis =
      options.mode === 'own' ? openRedis(options.connection, { maxRetriesPerRequest: null }) : undefined;
  }

  attach(consumer: FireJobConsumer): void {
    if (this.options.mode !== 'external') {
      throw new Error("attachConsumer needs a TimerRunner made with consumers: 'external'");
    }
    this.consumers.push(consumer);
  }

  /** Starts taking jobs; resolves once every consumer is connected (readiness waits for it). */
  async start(process: FireJobProcessor): Promise<void> {
    const connection = this.bullRedis;
    if (connection) this.consumers = this.options.keys.all().map((p) => this.own(p, connection, process));
    // An external consumer's run() resolves only when it closes: only its start is ours to wait for.
    else for (const consumer of this.consumers) void consumer.run();
    await Promise.all(this.consumers.map((consumer) => consumer.waitUntilReady()));
  }

  /** Takes no more jobs; resolves once the consumers are closed (their running jobs settled). */
  async close(): Promise<void> {
    await Promise.all(this.consumers.map((consumer) => consumer.close()));
    if (this.bullRedis) await closeRedis(this.bullRedis);
  }

  /**
   * Drops every consumer connection, for a close that Redis did not answer: BullMQ's last writes (the
   * job's completion, its lock) would otherwise be retried for as long as Redis stays away, and its
   * blocking connection would go on reconnecting. The jobs' locks then expire and the stalled check
   * hands them to another worker; the claims expire with their leases.
   */
  async disconnect(): Promise<void> {
    if (this.bullRedis) this.bullRedis.disconnect();
    await Promise.all(this.consumers.map((consumer) => consumer.disconnect().catch(() => undefined)));
  }

  private own(partition: number, connection: RedisClient, process: FireJobProcessor): FireJobConsumer {
    const { keys, settings, logError } = this.options;
    const worker = new Worker<FireJobData>(keys.queueName(partition), (job) => process(partition, job.data), {
      connection,
      ...settings,
    });
    worker.on('error', (error) => logError(`Sundial runner, partition ${partition}: ${error.message}`));
    return worker;
  }
}
