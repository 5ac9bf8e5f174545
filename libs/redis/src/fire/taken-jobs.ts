import { Job, type Worker } from 'bullmq';

/**
 * How long after its connection is back a consumer's queue is looked at: a take sent again on the new
 * connection (ioredis resends what went unanswered) is answered and its job started well within it.
 */
const SETTLE_MS = 1_000;

/** A consumer TakenJobs can watch: a BullMQ Worker (a host's consumer that is not one is left alone). */
export function isBullWorker(consumer: object): consumer is Worker {
  const worker = consumer as Partial<Worker>;
  return (
    typeof worker.id === 'string' &&
    typeof worker.getBackend === 'function' &&
    typeof worker.toKey === 'function'
  );
}

export interface TakenJobsOptions {
  /** `jobs` fire jobs a consumer took whose take's reply was lost were put back to wait */
  onPutBack(jobs: number): void;
  logError(message: string): void;
}

/**
 * "A take the client lost" (docs/design.md, the fire path, 4.), the counterpart of finished-jobs.ts:
 * a BullMQ Worker takes a job with `moveToActive` (or the `fetchNext` of a finish), which moves it to
 * `active` under a lock holding the Worker's token `<worker id>:<n>`. When the connection drops after
 * Redis ran it and before the reply came, the Worker never learns of the job (ioredis sends the take
 * again, which takes the next one): nobody runs it or renews its lock, and BullMQ's stalled check hands
 * it on only once that lock has expired, twice the lease and up to a lease more — 60 to 90 s with the
 * default lease, for timers that were due at once (seen in the chaos run "client connections killed":
 * a job taken at the first kill came back 10 s later with its 4 s lease).
 *
 * So when a consumer's connection is back after a close, its queue's `active` jobs are read once: each
 * locked with a token of this Worker, taken (`processedOn`, the take's own clock) before the close, and
 * never started by it is put back to `wait` with BullMQ's `moveJobFromActiveToWait`, which checks the
 * token itself (a job the stalled check handed on meanwhile, or one finished, is left as it is). Any
 * worker then takes it at once, and its claims run the timers still due (docs/spec.md §4.7). Nothing
 * per fired timer: an `LRANGE` and a `GET` per active job not started, per consumer, only when its
 * connection came back. On a Redis Cluster a shard's connection that drops is ended and made anew
 * (`-node`) while the client stays ready: its end is a close, and the check follows it the same way.
 */
/** A watched consumer, and the jobs it started and has not finished. */
interface Watched {
  consumer: Worker;
  started: Set<string>;
}

export class TakenJobs {
  private stopped = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  /**
   * the consumers on each connection: a runner's own Workers share one, and a listener pair per Worker
   * on it would pass Node's 10 (a warning per process with more than 5 partitions)
   */
  private readonly onConnection = new Map<object, Watched[]>();

  constructor(private readonly options: TakenJobsOptions) {}

  /** Watches `consumer` from now on: the jobs it starts, and its connection's closes. */
  watch(consumer: Worker): void {
    const watched: Watched = { consumer, started: new Set() };
    consumer.on('active', (job) => job.id !== undefined && watched.started.add(job.id));
    const settled = (job: Job | undefined) => job?.id !== undefined && watched.started.delete(job.id);
    consumer.on('completed', settled);
    consumer.on('failed', settled);
    void consumer
      .getBackend()
      .client.then((client) => {
        const others = this.onConnection.get(client);
        if (others) return void others.push(watched);
        const all = [watched];
        this.onConnection.set(client, all);
        let closedAt: number | undefined;
        const checkSoon = () => {
          if (closedAt === undefined || this.stopped) return;
          const since = closedAt;
          closedAt = undefined;
          const timer = setTimeout(() => {
            this.timers.delete(timer);
            for (const one of all) void this.check(one, since);
          }, SETTLE_MS).unref();
          this.timers.add(timer);
        };
        client.on('close', () => (closedAt ??= Date.now()));
        client.on('ready', checkSoon);
        // A Cluster ends a shard's connection that drops and makes a new one, sending the unanswered
        // take again on it (after `retryDelayOnFailover`): the client as a whole reports no close.
        client.on('-node', () => {
          closedAt ??= Date.now();
          checkSoon();
        });
      })
      .catch(() => undefined); // a consumer closed before it connected has nothing to watch
  }

  stop(): void {
    this.stopped = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    this.onConnection.clear();
  }

  private async check({ consumer, started }: Watched, closedAt: number): Promise<void> {
    try {
      const client = await consumer.getBackend().client;
      const active = (await client.lrange(consumer.toKey('active'), 0, -1)).filter((id) => !started.has(id));
      if (active.length === 0) return;
      const locks = await Promise.all(active.map((id) => client.get(consumer.toKey(`${id}:lock`))));
      let putBack = 0;
      for (const [n, id] of active.entries()) {
        const token = locks[n];
        if (token === null || !token.startsWith(`${consumer.id}:`)) continue;
        const job = await Job.fromId(consumer, id);
        // taken after the close: its reply came (or comes) on the new connection. In the close's own
        // millisecond it is not: a take, its reply dropped and the close on loopback often share one
        // (`>=` here left such a job to the stalled check in 1 of ~10 runs of test/redis/lost-take).
        if (job?.processedOn === undefined || job.processedOn > closedAt || started.has(id)) continue;
        // refused (-2 no lock, -6 another token): the stalled check or its finish came first
        putBack += await job.moveToWait(token).then(
          () => 1,
          () => 0,
        );
      }
      if (putBack > 0) this.options.onPutBack(putBack);
    } catch (error) {
      // the connection went again: its next return checks again (the jobs are still there)
      if (!this.stopped)
        this.options.logError(`checking the fire jobs taken before a reconnect: ${(error as Error).message}`);
    }
  }
}
