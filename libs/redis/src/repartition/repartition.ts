import { refusals } from '@sundial/core';
import { checkCommandTimeout, noAnswerWithin } from '../client/command-timeout';
import { ClusterClock } from '../infra/cluster-clock';
import {
  closeRedis,
  isCluster,
  openRedis,
  type RedisClient,
  type RedisConnection,
} from '../infra/connection';
import { readLayout, type RepartitionRecord } from '../infra/partition-count';
import { ConnectionCause } from '../infra/connection-cause';
import { isConnectionFailure } from '../infra/connection-failure';
import { whenSentinelsRefuse } from '../infra/sentinel-refusal';
import { reconcilePartition } from '../fire/reconciler';
import { FireCommands } from '../store/fire-commands';
import { checkKeyPrefix } from '../store/key-prefix';
import { MAX_PARTITIONS, SundialKeys } from '../store/keys';
import { defineCommands } from '../store/script-loader';
import { KeyMover } from './key-mover';
import { type RemovedPartitions, removePartitions } from './removed-partitions';
import { checkScanAllowed, scanPartition } from './scan-partition';

export interface RepartitionOptions {
  /** the Redis the timers are in: a redis://, redis+cluster:// or redis+sentinel:// URL, or ioredis options */
  connection: RedisConnection;
  /** key prefix `P` (default 'sundial') */
  prefix?: string;
  /** the partition count to move the timers to */
  to: number;
  /** told what is done after each step (a CLI prints it) */
  onProgress?: (progress: RepartitionProgress) => void;
  /**
   * How long each command waits for Redis's reply (default 5,000, as RedisTimers' commandTimeoutMs):
   * then the repartition stops `unavailable`, to be resumed by running it again. Without it a Redis that
   * could not be reached took ioredis's 20 reconnect attempts (~10.5 s), and one that took the
   * connection and answered nothing (frozen) held it for ever.
   */
  commandTimeoutMs?: number;
}

export interface RepartitionProgress {
  from: number;
  to: number;
  /** fenced: the old count's writes are refused; moving: keys are moving; waiting: only keys with a run in progress are left */
  phase: 'fenced' | 'moving' | 'waiting' | 'done';
  /** keys moved so far (rows and tombstones) */
  moved: number;
  /** keys waiting for their run to end before they move */
  busy: number;
}

export interface RepartitionResult {
  from: number;
  to: number;
  moved: number;
  /** Redis names deleted with the partitions the new count does not have (a queue counts its keys) */
  removed: number;
  /** what those partitions still held and was left (docs/operations.md "Changing the partition count") */
  left: string[];
  ms: number;
}

/** How long the moved ids are remembered after a repartition (a late repeat of a put adds nothing). */
const MOVED_MEMORY_MS = 24 * 60 * 60 * 1000;
/** Keys read per step of a partition's key index. */
const PAGE = 1000;
/** Pause between tries of the keys whose run is in progress. */
const BUSY_RETRY_MS = 100;
/** How often, while keys wait for their runs, the old partitions' expired leases are settled here. */
const RECONCILE_EVERY_MS = 1000;
const RECONCILE_GRACE_MS = 2000;

/**
 * Moves every timer under `prefix` to `to` partitions while the cluster runs (docs/design.md
 * "Repartition", docs/operations.md "Changing the partition count"). Resolves when every row, tombstone
 * and index entry is in its new partition and `P:partitions` holds `to`. Refuses (SundialError, field
 * `to`) a count out of range, the count the timers have, or a repartition to another count under way;
 * one to the same count (whose process died) is resumed. Runs in progress are not interrupted: their
 * keys move when they end. A Redis that cannot be reached, or leaves a command unanswered for
 * `commandTimeoutMs`, is refused `unavailable`, naming the connection's error (`connect ECONNREFUSED …`,
 * `getaddrinfo ENOTFOUND …`) or the wait; run it again to resume.
 */
export async function repartition(options: RepartitionOptions): Promise<RepartitionResult> {
  const { to } = options;
  if (!Number.isInteger(to) || to < 1 || to > MAX_PARTITIONS)
    throw refusals.repartitionTarget(to, MAX_PARTITIONS);
  checkKeyPrefix(options.prefix ?? 'sundial'); // a brace prefix reaches into another prefix's keys
  const commandTimeoutMs = checkCommandTimeout(options.commandTimeoutMs);
  // a socket a frozen Redis leaves open is destroyed as it is closed: ioredis waits 2 s for it otherwise
  const redis = openRedis(options.connection, { commandTimeout: commandTimeoutMs, disconnectTimeout: 0 });
  // ioredis gives a command up saying only "max retries": the refusal names the connection's own error
  const cause = new ConnectionCause(redis);
  // Sentinels that know no such primary or refuse the AUTH: its commands would wait for ever
  const sentinels = whenSentinelsRefuse(redis);
  const repartitioning = new Repartition(redis, options);
  try {
    defineCommands(redis);
    const run = repartitioning.run();
    run.catch(() => undefined); // the refusal may win: the close below then rejects what it waits for
    return await Promise.race([run, sentinels.refused]);
  } catch (error) {
    if (!isConnectionFailure(error)) throw error;
    const told = noAnswerWithin(cause.of(error), commandTimeoutMs);
    // once a write was sent (its reply lost, too) the call may have changed something: not "nothing"
    throw repartitioning.wrote ? refusals.repartitionCut(told, to) : refusals.unavailable(told);
  } finally {
    cause.stop();
    sentinels.stop();
    await closeRedis(redis);
  }
}

class Repartition {
  private readonly prefix: string;
  private readonly to: number;
  private readonly startedAt = Date.now();
  private moved = 0;
  /** a write was sent: from then on a cut-off repartition may have changed something */
  wrote = false;

  constructor(
    private readonly redis: RedisClient,
    private readonly options: RepartitionOptions,
  ) {
    this.prefix = options.prefix ?? 'sundial';
    this.to = options.to;
  }

  async run(): Promise<RepartitionResult> {
    await checkScanAllowed(this.redis);
    const record = await this.begin();
    if (!record) return this.result(this.to, { removed: 0, left: [] });
    this.wrote = true; // a repartition under way (begun now, or by a run cut off before): all on writes
    const tagging = isCluster(this.redis) ? 'spread' : 'plain';
    const from = new SundialKeys(this.prefix, record.from, tagging);
    const to = new SundialKeys(this.prefix, this.to, tagging);
    if (record.state === 'preparing') {
      await this.fence(from, to);
      await this.redis.set(to.repartition, JSON.stringify({ ...record, state: 'moving' }), 'XX');
    }
    this.report(record.from, 'fenced', 0);
    const mover = new KeyMover(this.redis, from, to);
    await this.copyRequests(from, to);
    await this.waitForRuns(from, mover, await this.moveAll(from, mover));
    const removed = await this.finish(from, to);
    this.report(record.from, 'done', 0);
    return this.result(record.from, removed);
  }

  private result(from: number, { removed, left }: RemovedPartitions): RepartitionResult {
    return { from, to: this.to, moved: this.moved, removed, left, ms: Date.now() - this.startedAt };
  }

  /**
   * Claims the repartition (`P:repartition`, SET NX), or resumes one to the same count; null when no
   * process ever wrote under the prefix (the count is just recorded: there is nothing to move).
   */
  private async begin(): Promise<RepartitionRecord | null> {
    const keys = new SundialKeys(this.prefix, this.to);
    for (;;) {
      const { count, repartition } = await readLayout(this.redis, keys);
      if (repartition) {
        if (repartition.to === this.to) return repartition;
        throw refusals.repartitionBusy(this.prefix, repartition.from, repartition.to);
      }
      if (count === this.to) throw refusals.repartitionSame(this.prefix, count);
      this.wrote = true; // each way on from here sends a write (its reply may be lost)
      if (!count) {
        // No process ever started on this prefix: there is nothing to move.
        if ((await this.redis.set(keys.partitionCount, String(this.to), 'NX')) === 'OK') return null;
        continue;
      }
      const record: RepartitionRecord = {
        from: count,
        to: this.to,
        state: 'preparing',
        startedAt: this.startedAt,
      };
      if ((await this.redis.set(keys.repartition, JSON.stringify(record), 'NX')) === 'OK') return record;
    }
  }

  /**
   * Every partition of both layouts takes store writes from the new count only; then each new
   * partition's id counter starts above every old one, so an id made now never equals a moved one
   * (`<seq>p<N>`: old and new partition N may be different bases). The ids an earlier repartition moved
   * into a new partition are forgotten: remembered, they would refuse the put of a key moving back
   * there (2 → 4 → 2 within the day), and that repartition ended before this one could begin.
   */
  private async fence(from: SundialKeys, to: SundialKeys): Promise<void> {
    const fences = new Set([
      ...from.all().map((n) => from.layoutFence(n)),
      ...to.all().map((n) => to.layoutFence(n)),
    ]);
    await Promise.all([...fences].map((fence) => this.redis.set(fence, String(this.to))));
    await Promise.all(to.all().map((n) => this.redis.del(to.moved(n))));
    const seqs = await Promise.all(from.all().map((n) => this.redis.get(from.seq(n))));
    const highest = Math.max(0, ...seqs.map(Number));
    await Promise.all(
      to.all().map(async (n) => {
        if (Number(await this.redis.get(to.seq(n))) < highest)
          await this.redis.set(to.seq(n), String(highest));
      }),
    );
  }

  /**
   * The answers remembered under a caller's request id (docs/design.md "Repeated calls") for a call on
   * one key — `q:<requestId>:c` (cancel) and `:w` (reschedule, pause, resume, trigger) — are remembered
   * in every new partition, so a retry after the repartition answers as the first try. Those of
   * `scheduleMany` and `cancelAll` name calls by partition, which the new count splits otherwise: a
   * retry of one runs again (schedule then finds its keys live). The one-minute ones of calls without a
   * request id (ioredis resends) are left: a resend from the old count is refused by the fence anyway.
   */
  private async copyRequests(from: SundialKeys, to: SundialKeys): Promise<void> {
    for (const n of from.all()) {
      const base = from.base(n);
      const targets = to
        .all()
        .map((m) => to.base(m))
        .filter((target) => target !== base);
      for await (const names of scanPartition(this.redis, base, 'q:*:[cw]')) {
        await Promise.all(
          names.map(async (name) => {
            const [value, ttl] = await Promise.all([this.redis.getBuffer(name), this.redis.pttl(name)]);
            if (!value || ttl <= 0) return;
            const id = name.slice(base.length);
            await Promise.all(
              targets.map((target) => this.redis.set(`${target}${id}`, value, 'PX', ttl, 'NX')),
            );
          }),
        );
      }
    }
  }

  /**
   * Every key of every old partition that moves (partitions side by side): its index of keys, a page
   * read while the previous one moves; then, in one SCAN, the tombstones, the ledgers of keys that have
   * no row (a timer removed when it finished keeps its ledger 7 days) and the moving records a mover that
   * died left (`x:`, `h:`, `hd:`, `m:`, `mx:`, `mh:`).
   */
  private async moveAll(from: SundialKeys, mover: KeyMover): Promise<string[]> {
    const busy: string[] = [];
    const move = async (keys: string[]) => {
      const result = await mover.move(keys);
      this.moved += result.moved;
      busy.push(...result.busy);
      this.report(from.partitions, 'moving', busy.length);
    };
    const fire = new FireCommands(this.redis, from);
    await Promise.all(
      from.all().map(async (n) => {
        // a cancelAll's scope record (fenced: no mark comes after) settled first: its keys are out of `keys`
        while (await fire.sweepRecord(n, PAGE));
        let moving = Promise.resolve();
        for (let after = '-'; ;) {
          // keys that stay are passed over: the next page starts after the last key read
          const keys = await this.redis.zrangebylex(from.keys(n), after, '+', 'LIMIT', 0, PAGE);
          await moving;
          moving = move(keys);
          if (keys.length < PAGE) break;
          after = `(${keys[keys.length - 1]}`;
        }
        await moving;
        const base = from.base(n);
        for await (const names of scanPartition(this.redis, base, '[xmh]*')) {
          const keys = names.map((name) => /^(?:x|m|mx|h|hd|mh):(.*)$/s.exec(name.slice(base.length))?.[1]);
          await move(keys.filter((key): key is string => key !== undefined));
        }
      }),
    );
    return busy;
  }

  /**
   * Keys whose run was in progress move once it ended. Their workers complete them where they are;
   * one that died leaves an expired lease, settled here too (requeued or recorded lost) in case no
   * scheduler of the old count runs any more.
   */
  private async waitForRuns(from: SundialKeys, mover: KeyMover, busy: string[]): Promise<void> {
    const commands = new FireCommands(this.redis, from);
    const clock = new ClusterClock(this.redis);
    await clock.sync();
    let reconciledAt = Date.now();
    while (busy.length > 0) {
      this.report(from.partitions, 'waiting', busy.length);
      await delay(BUSY_RETRY_MS);
      if (Date.now() - reconciledAt >= RECONCILE_EVERY_MS) {
        const partitions = new Set(busy.map((key) => from.partitionOf(key)));
        for (const n of partitions) await reconcilePartition(commands, clock, n, RECONCILE_GRACE_MS, PAGE);
        reconciledAt = Date.now();
      }
      const result = await mover.move(busy);
      this.moved += result.moved;
      busy = result.busy;
    }
  }

  /**
   * The new count is the data's (counted first, for the data looks: infra/data-marker.ts); the moved ids are remembered a day longer; what only the partitions
   * the new count does not have held is deleted while the record still names the repartition, so a
   * run resumed after a death here deletes the rest; then the record goes (the old count's processes
   * shut down: they served nothing any more).
   */
  private async finish(from: SundialKeys, to: SundialKeys): Promise<RemovedPartitions> {
    await Promise.all(to.all().map((n) => this.redis.pexpire(to.moved(n), MOVED_MEMORY_MS)));
    await this.redis.incr(to.repartitions);
    await this.redis.set(to.partitionCount, String(this.to));
    const removed = await removePartitions(this.redis, from, to);
    await this.redis.del(to.repartition);
    return removed;
  }

  private report(from: number, phase: RepartitionProgress['phase'], busy: number): void {
    this.options.onProgress?.({ from, to: this.to, phase, moved: this.moved, busy });
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
