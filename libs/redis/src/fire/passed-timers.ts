import type { SundialLogger } from '@sundial/core';
import { Queue } from 'bullmq';
import { closeRedis, openRedis, type RedisClient, type RedisConnection } from '../infra/connection';
import { throttleErrors } from '../infra/error-throttle';
import type { FireJobData, TimerRef } from '../store/fire-commands';
import type { SundialKeys } from '../store/keys';

// Why a file of its own: only a runner that lacks a handler some live worker has adds fire jobs (the
// dispatcher adds all the others); its queues and their connection are opened on its first pass.

/**
 * How long after its pass a timer's fire job is added: another worker lacking the handler (this one again,
 * or one of the same build) passes it on again at most this often, not in a hot loop. A job arrives a
 * lead before its due (dispatcher.ts) and is passed on at once (due-claims.ts), so a first pass costs a
 * timer no lateness as a rule. Waited here, not as BullMQ's `delay`: a delayed job was at times taken
 * ~1 s after it was due (some 1 in 100 at 300 passed timers in 3 s, 2 workers).
 */
export const PASS_DELAY_MS = 50;

export interface PassedTimersOptions {
  connection: RedisConnection;
  /** Redis's clock as seen from here: the jobs' `timestamp`, as the dispatcher's (consumer-watchdog.ts) */
  clock: { now(): number };
  keys: SundialKeys;
  logger: SundialLogger;
  fields: Record<string, unknown>;
}

/**
 * The fire jobs of the timers a claim passed on (claim.lua 'passed'): one per claim call (its `jobId`,
 * which claim.lua recorded in `jobs` with the timers' new `armed` score), added to the partition's queue
 * PASS_DELAY_MS later. Should the add fail (or this process die first), the timers stay armed without a job and the
 * reconciler arms them again after its grace, as for a dispatcher's job.
 */
export class PassedTimers {
  private readonly waiting = new Map<
    string,
    { partition: number; timers: TimerRef[]; wait: NodeJS.Timeout }
  >();
  private readonly queues = new Map<number, Queue<FireJobData>>();
  private readonly adding = new Set<Promise<unknown>>();
  private connection: RedisClient | undefined;
  private closed = false;

  constructor(private readonly options: PassedTimersOptions) {}

  /** A timer claim.lua passed on into `jobId` ('': none to add); the call's timers are added together. */
  pass(partition: number, jobId: string, ref: TimerRef): void {
    // closed: the timer stays armed without a job, and the reconciler arms it again
    if (jobId === '' || this.closed) return;
    let job = this.waiting.get(jobId);
    if (!job) {
      // (the rest of the call's answers, taken in one synchronous loop, join it meanwhile)
      job = { partition, timers: [], wait: setTimeout(() => this.add(jobId), PASS_DELAY_MS) };
      this.waiting.set(jobId, job);
    }
    job.timers.push(ref);
  }

  /** Adds the jobs still waiting at once, lets the adds settle, then closes the queues and their connection. */
  async close(): Promise<void> {
    this.closed = true;
    for (const [jobId, job] of this.waiting) {
      clearTimeout(job.wait);
      this.add(jobId);
    }
    await Promise.allSettled([...this.adding]);
    await Promise.allSettled([...this.queues.values()].map((queue) => queue.close()));
    if (this.connection) await closeRedis(this.connection);
  }

  private add(jobId: string): void {
    const job = this.waiting.get(jobId)!;
    this.waiting.delete(jobId);
    const { logger, fields, clock } = this.options;
    const { partition, timers } = job;
    const timestamp = clock.now();
    const added = this.queue(partition)
      .add('fire', { timers }, { jobId, removeOnComplete: true, removeOnFail: true, timestamp })
      .catch((error: unknown) =>
        logger.error(
          `Sundial runner could not add the fire job of timers passed on to a worker with their handler: ${(error as Error).message}; the reconciler arms them again`,
          { ...fields, partition, keys: timers.map((timer) => timer.key) },
        ),
      )
      .finally(() => this.adding.delete(added));
    this.adding.add(added);
  }

  private queue(partition: number): Queue<FireJobData> {
    let queue = this.queues.get(partition);
    if (!queue) {
      const { keys, logger, fields } = this.options;
      this.connection ??= openRedis(this.options.connection, { maxRetriesPerRequest: null });
      queue = new Queue<FireJobData>(keys.queueName(partition), {
        connection: this.connection,
        prefix: keys.bullPrefix,
      });
      throttleErrors(queue, 'Sundial runner queue (timers passed on)', {
        error: (message) => logger.error(message, { ...fields, partition }),
        info: (message) => logger.info(message, { ...fields, partition }),
      });
      this.queues.set(partition, queue);
    }
    return queue;
  }
}
