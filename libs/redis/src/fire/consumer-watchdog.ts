import type { RedisClient } from '../infra/connection';
import { ConnectionCause } from '../infra/connection-cause';
import { ErrorThrottle } from '../infra/error-throttle';
import type { SundialKeys } from '../store/keys';

/**
 * How long a partition's consumer may take no job while that queue holds a job waiting longer, before it
 * is judged stuck and made anew (SUNDIAL_CONSUMER_STALL_MS). Three times BullMQ's longest blocking wait
 * (10 s), so BullMQ's own recovery of a blocking read that never returns (its watchdog) goes first.
 */
export const DEFAULT_CONSUMER_STALL_MS = 30_000;

export interface ConsumerWatchdogOptions {
  /** a command connection: the watchdog reads the queues' oldest waiting job with it */
  redis: RedisClient;
  keys: SundialKeys;
  /** the partitions whose consumers are watched */
  partitions: readonly number[];
  stallMs: number;
  /** jobs in flight per partition at which taking no more is expected */
  concurrency: number;
  /** closes the stuck consumer of `partition` and starts another */
  recreate(partition: number): Promise<void>;
  logError(message: string): void;
  /** its checks answer again after failing (the `connected again` line of error-throttle.ts) */
  logInfo(message: string): void;
}

interface Partition {
  lastTakenAt: number;
  inFlight: number;
}

/**
 * Finds fire-job consumers that stopped taking jobs (BullMQ workers are known to after some failovers:
 * a blocking or main connection left waiting for a reply that never comes) and has them made anew. A
 * consumer is stuck when, for `stallMs`, it has taken no job while it had room for one and its queue's
 * oldest waiting job was added more than `stallMs` ago. Cheap: a partition's queue is read only after
 * its consumer has been idle for `stallMs`.
 */
export class ConsumerWatchdog {
  private readonly partitions = new Map<number, Partition>();
  private timer: NodeJS.Timeout | undefined;
  private checking = false;
  /**
   * A check fails at each try while Redis is away (every stallMs / 3): logged as a BullMQ connection's
   * errors are, the first, a count an interval, and `connected again` at the next check that read Redis.
   */
  private readonly errors: ErrorThrottle;
  /** why a read failed, when ioredis says only `Reached the max retries per request limit` */
  private cause: ConnectionCause | undefined;

  constructor(private readonly options: ConsumerWatchdogOptions) {
    this.errors = new ErrorThrottle('Sundial consumer watchdog', {
      error: options.logError,
      info: options.logInfo,
    });
  }

  start(): void {
    const now = Date.now();
    for (const partition of this.options.partitions)
      this.partitions.set(partition, { lastTakenAt: now, inFlight: 0 });
    this.cause = new ConnectionCause(this.options.redis);
    const everyMs = Math.max(100, Math.floor(this.options.stallMs / 3));
    this.timer = setInterval(() => void this.check(), everyMs);
  }

  stop(): void {
    clearInterval(this.timer);
    this.cause?.stop();
  }

  /** A job of `partition` was taken; `done` settles when it has been processed. */
  taken(partition: number, done: Promise<unknown>): void {
    const state = this.partitions.get(partition);
    if (!state) return;
    state.lastTakenAt = Date.now();
    state.inFlight++;
    void done.finally(() => state.inFlight--).catch(() => undefined);
  }

  private async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    let readRedis = false;
    try {
      for (const [partition, state] of this.partitions) {
        if (state.inFlight >= this.options.concurrency) continue;
        if (Date.now() - state.lastTakenAt < this.options.stallMs) continue;
        const waitedMs = await this.oldestWaitingMs(partition);
        readRedis = true;
        if (waitedMs === undefined || waitedMs < this.options.stallMs) continue;
        state.lastTakenAt = Date.now(); // the new consumer gets a whole stallMs to take its first job
        await this.options.recreate(partition);
      }
      // A check that read nothing (every consumer busy or taking jobs) says nothing of Redis.
      if (readRedis) this.errors.recovered();
    } catch (error) {
      // Redis unreachable: nothing can be judged (no consumer could take a job either).
      this.errors.error(this.cause?.of(error as Error) ?? (error as Error));
    } finally {
      this.checking = false;
    }
  }

  /**
   * How long the oldest job of the partition's wait list has waited (by its BullMQ `timestamp`), or
   * undefined when none waits. BullMQ adds jobs at the head of `wait` and takes them from its tail.
   * The dispatcher stamps a job on Redis's clock, so its age is read against Redis's `TIME`: on this
   * host's clock, a dispatcher an hour ahead made every job look an hour younger than it was, and a stuck
   * consumer was not replaced for that hour.
   */
  private async oldestWaitingMs(partition: number): Promise<number | undefined> {
    const { redis, keys } = this.options;
    const queueKey = `${keys.bullPrefix}:${keys.queueName(partition)}`;
    const oldest = await redis.lindex(`${queueKey}:wait`, -1);
    if (oldest === null) return undefined;
    const [addedAt, [seconds, micros]] = await Promise.all([
      redis.hget(`${queueKey}:${oldest}`, 'timestamp'),
      redis.time(),
    ]);
    const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
    return addedAt === null ? undefined : now - Number(addedAt);
  }
}
