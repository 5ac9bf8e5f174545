import { Queue, Worker, type Job } from 'bullmq';
import { epochNow } from '../processes/clock';
import type { ChildConfig, RunRecord, RunningRole } from '../processes/protocol';
import { BENCH_PAYLOAD, type Contender, type OneShot } from './contender';

/** Raw BullMQ doing Sundial's job the way a user would by hand: one delayed job per timer, jobId = key. */
const QUEUE = 'bench-fire';
const JOB_OPTIONS = { removeOnComplete: true, removeOnFail: true };

/** BullMQ job ids cannot be reused while the old job exists, so a rescheduled timer gets `<key>.v<n>`. */
function jobId(key: string, version: number): string {
  return version === 1 ? key : `${key}.v${version}`;
}

function keyOfJobId(id: string): string {
  return id.replace(/\.v\d+$/, '');
}

function connection(redisUrl: string): { url: string; maxRetriesPerRequest: null } {
  return { url: redisUrl, maxRetriesPerRequest: null };
}

export function createBullmqContender(redisUrl: string): Contender {
  const queue = new Queue(QUEUE, { connection: connection(redisUrl) });
  const versions = new Map<string, number>();

  // The due is timestamp + delay (BullMQ's own definition); a due already past is delay 0 with that due.
  const jobFor = (key: string, dueAt: number, version: number, now: number) => {
    const delay = Math.max(0, dueAt - now);
    return {
      name: 'fire',
      data: BENCH_PAYLOAD,
      opts: { ...JOB_OPTIONS, jobId: jobId(key, version), delay, timestamp: dueAt - delay },
    };
  };

  return {
    name: 'bullmq',
    workerRole: 'bullmq-worker',
    serviceRoles: [],
    async scheduleMany(timers: readonly OneShot[]) {
      const now = Date.now();
      await queue.addBulk(timers.map(({ key, dueAt }) => jobFor(key, dueAt, 1, now)));
    },
    // Moving a delayed job by hand: remove it and add its successor (changeDelay would keep the old timestamp).
    async reschedule(key, dueAt) {
      const version = versions.get(key) ?? 1;
      versions.set(key, version + 1);
      await queue.remove(jobId(key, version));
      const { name, data, opts } = jobFor(key, dueAt, version + 1, Date.now());
      await queue.add(name, data, opts);
    },
    async cancel(key) {
      await queue.remove(jobId(key, versions.get(key) ?? 1));
    },
    // BullMQ has no cancel-by-prefix; the nearest is draining the whole queue (waiting + delayed jobs).
    async cancelAll() {
      const count = await queue.getJobCountByTypes('delayed', 'wait');
      await queue.drain(true);
      return count;
    },
    close: () => queue.close(),
  };
}

export async function startBullmqWorker(
  config: ChildConfig,
  record: (run: RunRecord) => void,
): Promise<RunningRole> {
  const worker = new Worker(
    QUEUE,
    async (job: Job) => {
      // job.delay reads 0 once BullMQ promotes the job; the options keep the delay it was added with.
      const run: RunRecord = [keyOfJobId(job.id ?? ''), job.timestamp + (job.opts.delay ?? 0), epochNow()];
      if (config.claims && job.processedOn !== undefined) run.push(job.processedOn);
      record(run);
    },
    { connection: connection(config.redisUrl), concurrency: config.concurrency },
  );
  await worker.waitUntilReady();
  return { close: () => worker.close() };
}
