import type { Job } from 'bullmq';
import type { Cluster } from 'ioredis';
import { isCluster, type RedisClient } from '../infra/connection';

/**
 * A job finished up to `checkedMs` before the runner's connection closed (on a Redis Cluster: before the
 * last slots' refresh that found the old primaries) is checked once it is back (at most `kept` of them,
 * the oldest dropped first); one still held there whose finish again failed (its
 * consumer's connection not yet moved over) is tried again every `retryMs`, `retries` times.
 */
const FINISHES = { checkedMs: 10_000, kept: 10_000, retryMs: 500, retries: 20 } as const;

/**
 * How often a Redis Cluster runner connection asks for the slots (one `CLUSTER SLOTS`): ioredis refreshes
 * them only at a `MOVED` (or a command cut off), its `slotsRefreshInterval` being unset by default (6.0.0
 * documents 5000 but applies none), so a runner sending nothing to a failed-over shard found its new
 * primary only after the finishes' 10 s were past. Each second leaves most of them to check after a takeover.
 */
const SLOTS_REFRESH_MS = 1_000;

interface Finish {
  job: Job;
  token: string;
  at: number;
}

export interface FinishedJobsOptions {
  /**
   * the runner's command connection: its return after a close is what starts a check; on a Redis Cluster
   * (whose client emits no close for one shard's failover) a slots' refresh that finds other primaries
   */
  redis: RedisClient;
  /** `jobs` fire jobs were found still active with their consumer's lock, and finished again */
  onFinishedAgain(jobs: number): void;
  logError(message: string): void;
}

/**
 * The fire jobs the runner's consumers finished lately, checked again when its connection comes back
 * after a close, or on a Redis Cluster finds a shard's new primary (docs/spec.md §4.7, design.md "A
 * finish the server lost"). A server that took over — a
 * Sentinel failover, where what the old primary took after the promotion is gone; a Redis restarted from
 * an AOF that lost its last second — may still hold such a job `active` with the lock its consumer had:
 * nobody renews that lock, yet BullMQ's stalled check hands the job on only once it expired (twice the
 * lease, then up to a lease more), and while the job exists the reconciler leaves its timers armed. So
 * each job finished within FINISHES.checkedMs before the close whose lock key the server answers with
 * the token it ran under is finished again (BullMQ's `moveToCompleted`, which checks that lock itself):
 * the job goes, and the reconciler re-arms the timers it had not claimed there (§4.3). No command per
 * fired timer: one `GET` per recent job, only when the connection came back.
 */
export class FinishedJobs {
  /** the finishes kept, oldest first, from `head` on */
  private recent: Finish[] = [];
  private head = 0;
  private toCheck: Finish[] = [];
  /** the connection is up (ready before this watch began, too: a connection passed in, already open) */
  private connected: boolean;
  private retry: NodeJS.Timeout | undefined;
  /** a Cluster connection's own slots' refresh (SLOTS_REFRESH_MS) */
  private refresh: NodeJS.Timeout | undefined;
  /**
   * On a Redis Cluster, when a slots' refresh last found the primaries it knew: a promotion it finds later
   * came after that, so the look-back runs from there, not from when a refresh found it (a refresh fails
   * or comes late on a loaded host, or a node answering it has not heard of the promotion yet).
   */
  private primariesSeenAt: number | undefined;

  constructor(private readonly options: FinishedJobsOptions) {
    this.connected = options.redis.status === 'ready';
    options.redis.on('close', () => this.closed());
    options.redis.on('ready', () => this.ready());
    if (isCluster(options.redis)) {
      this.refresh = watchPrimaries(options.redis, (changed) => {
        if (changed) {
          this.closed();
          this.ready();
        }
        this.primariesSeenAt = Date.now();
      });
    }
  }

  private ready(): void {
    this.connected = true;
    void this.check(0);
  }

  /** A consumer finished `job` (BullMQ's `completed` or `failed`: its finish was answered). */
  finished(job: Job | undefined): void {
    if (job?.token === undefined) return;
    this.recent.push({ job, token: job.token, at: Date.now() });
    this.trim();
  }

  stop(): void {
    clearTimeout(this.retry);
    clearInterval(this.refresh);
    this.recent = [];
    this.head = 0;
    this.toCheck = [];
  }

  private closed(): void {
    if (!this.connected) return;
    this.connected = false;
    clearTimeout(this.retry);
    this.trim();
    this.owe(this.recent.slice(this.head));
    this.recent = [];
    this.head = 0;
  }

  /**
   * Adds finishes to check once the connection is back, keeping the newest FINISHES.kept: a connection
   * that dropped again before each check was answered piled up every close's (and their jobs' data).
   */
  private owe(finishes: Finish[]): void {
    this.toCheck = [...this.toCheck, ...finishes].sort((a, b) => a.at - b.at).slice(-FINISHES.kept);
  }

  /**
   * Drops the finishes older than FINISHES.checkedMs before now — on a Redis Cluster before the last refresh
   * that found the primaries unchanged — and those past FINISHES.kept (oldest first).
   */
  private trim(): void {
    const since = Math.min(Date.now(), this.primariesSeenAt ?? Infinity) - FINISHES.checkedMs;
    while (this.head < this.recent.length && this.recent[this.head].at < since) this.head++;
    this.head = Math.max(this.head, this.recent.length - FINISHES.kept);
    // the array is cut only once half of it is dropped: a cut per finish would copy it per finish
    if (this.head > this.recent.length / 2) {
      this.recent = this.recent.slice(this.head);
      this.head = 0;
    }
  }

  private async check(attempt: number): Promise<void> {
    const finishes = this.toCheck;
    this.toCheck = [];
    if (finishes.length === 0) return;
    try {
      const locks = await Promise.all(
        finishes.map(({ job }) => this.options.redis.get(`${job.queueQualifiedName}:${job.id}:lock`)),
      );
      const held = finishes.filter((finish, n) => locks[n] === finish.token);
      // moveToCompleted checks the lock again: a finish that reached this server meanwhile makes it a no-op.
      const done = await Promise.all(
        held.map(({ job, token }) =>
          job.moveToCompleted(undefined, token, false).then(
            () => true,
            () => false,
          ),
        ),
      );
      const count = done.filter(Boolean).length;
      if (count > 0) this.options.onFinishedAgain(count);
      // Not finished: its consumer's connection may still be on the old server (it moves on its own).
      const left = held.filter((_, n) => !done[n]);
      if (left.length > 0 && attempt < FINISHES.retries && this.connected) {
        this.toCheck.push(...left);
        this.retry = setTimeout(() => void this.check(attempt + 1), FINISHES.retryMs).unref();
      }
    } catch (error) {
      // The connection went again: what is unchecked waits for its next return.
      if (!this.connected) this.owe(finishes);
      else
        this.options.logError(
          `checking the fire jobs finished before a reconnect: ${(error as Error).message}`,
        );
    }
  }
}

/**
 * Tells `refreshed` of each Redis Cluster slots' refresh that answered (at a MOVED, and every
 * SLOTS_REFRESH_MS: the timer returned) whether it found another set of primaries than the last: a shard's
 * replica promoted, whose old primary may have taken finishes it never passed on. The client's own close
 * and ready come only when every node is lost.
 */
function watchPrimaries(cluster: Cluster, refreshed: (changed: boolean) => void): NodeJS.Timeout {
  const primaries = () =>
    cluster
      .nodes('master')
      .map(({ options }) => `${options.host}:${options.port}`)
      .sort()
      .join(',');
  let last = '';
  cluster.on('refresh', () => {
    const now = primaries();
    refreshed(last !== '' && now !== last);
    last = now;
  });
  // Only while ready: a refresh of a closed or reconnecting client would fail, and its return is a `ready`.
  return setInterval(() => {
    if (cluster.status === 'ready') cluster.refreshSlotsCache();
  }, SLOTS_REFRESH_MS).unref();
}
