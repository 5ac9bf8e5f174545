import { Queue } from 'bullmq';
import { noCommands, Partitioned, type PartitionedOptions } from '../infra/partitioned';
import type { BacklogSource } from './sundial-metrics';

export type BacklogOptions = PartitionedOptions;

/** The BullMQ job states counted by `sundial_queue_jobs`. */
const JOB_STATES = ['waiting', 'active', 'delayed', 'completed', 'failed'] as const;

/**
 * How far past its due (a `due` entry) or its hand-off (an `armed` entry) a timer must be to count as
 * overdue: a healthy cluster claims within milliseconds, so a second means a dispatcher or the
 * workers are behind (or a fire job is lost and waits for the reconciler).
 */
export const OVERDUE_AFTER_MS = 1000;

/** Reads, for the metrics gauges, how many timers wait to fire and how many fire jobs are queued. */
export class Backlog extends Partitioned implements BacklogSource {
  private readonly queues: Queue[];

  constructor(options: BacklogOptions) {
    // One retry: a scrape while Redis is down answers soon, without these readings.
    super(options, noCommands, { maxRetriesPerRequest: 1 });
    this.redis.on('error', () => undefined); // a scrape then goes without the readings
    this.queues = this.keys.all().map((n) => {
      const queue = new Queue(this.keys.queueName(n), {
        connection: this.redis,
        prefix: this.keys.bullPrefix,
      });
      queue.on('error', () => undefined); // the same: only these readings go missing
      return queue;
    });
  }

  /** The prefix this backlog reads: SundialMetrics counts one reading per prefix (sundial-metrics.ts). */
  get prefix(): string {
    return this.keys.prefix;
  }

  async pending(): Promise<Record<string, number>> {
    const counts = await Promise.all(
      this.keys.all().map(async (n) => {
        const [due, armed] = await Promise.all([
          this.redis.zcard(this.keys.due(n)),
          this.redis.zcard(this.keys.armed(n)),
        ]);
        return [String(n), due + armed] as const;
      }),
    );
    return Object.fromEntries(counts);
  }

  async overdue(): Promise<Record<string, number>> {
    const [seconds, micros] = await this.redis.time();
    const before = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000) - OVERDUE_AFTER_MS;
    const counts = await Promise.all(
      this.keys.all().map(async (n) => {
        const [due, armed] = await Promise.all([
          this.redis.zcount(this.keys.due(n), '-inf', before),
          this.redis.zcount(this.keys.armed(n), '-inf', before),
        ]);
        return [String(n), due + armed] as const;
      }),
    );
    return Object.fromEntries(counts);
  }

  /**
   * partition → keys a cancelAll's scope record covers and its sweep has not cancelled yet (`scm`): 0
   * everywhere once every sweep is done, which a rollback to a release without records waits for
   * (docs/operations.md "Upgrading").
   */
  async unswept(): Promise<Record<string, number>> {
    const counts = await Promise.all(
      this.keys
        .all()
        .map(async (n) => [String(n), await this.redis.scard(`${this.keys.base(n)}scm`)] as const),
    );
    return Object.fromEntries(counts);
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async queueJobs(): Promise<Record<string, number>> {
    const totals: Record<string, number> = Object.fromEntries(JOB_STATES.map((state) => [state, 0]));
    for (const counts of await Promise.all(this.queues.map((queue) => queue.getJobCounts(...JOB_STATES)))) {
      for (const state of JOB_STATES) totals[state] += counts[state] ?? 0;
    }
    return totals;
  }

  async close(): Promise<void> {
    await Promise.all(this.queues.map((queue) => queue.close()));
    await this.closeConnection();
  }
}
