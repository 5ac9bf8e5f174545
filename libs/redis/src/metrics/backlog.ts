import { Queue } from 'bullmq';
import { noCommands, Partitioned, type PartitionedOptions } from '../infra/partitioned';
import type { BacklogSource } from './sundial-metrics';

export type BacklogOptions = PartitionedOptions;

/** The BullMQ job states counted by `sundial_queue_jobs`. */
const JOB_STATES = ['waiting', 'active', 'delayed', 'completed', 'failed'] as const;

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
