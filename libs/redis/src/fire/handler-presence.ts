import type { SundialLogger } from '@sundial/core';
import type { ClusterClock } from '../infra/cluster-clock';
import type { RedisClient } from '../infra/connection';
import { partitionRanges, readPartitionRanges } from '../infra/served-partitions';
import type { SundialKeys } from '../store/keys';

// Why a file of its own: during a rolling deploy a worker of the older build lacks a handler only the
// newer build has. Each runner says which handlers it has, per partition it consumes, and learns which
// handlers some live worker of that partition has that it lacks: its claims pass those timers on
// (claim.lua 'passed') instead of failing them `unknown-handler` (docs/spec.md §3.2). The model is
// dispatcher-presence.ts: one zset of members scored with the time (Redis's clock) they last to — one key,
// so a runner's cost is the same whatever the partition count (a key per partition would be a read per
// partition, in as many slots on a Redis Cluster).

/** How often a runner announces its handlers and reads the others' (one round trip). */
export const HANDLERS_ANNOUNCE_EVERY_MS = 5_000;
/** How long one announcement lasts (its score, and the key's TTL): two missed in a row are still in it. */
export const HANDLERS_ANNOUNCED_FOR_MS = 15_000;
/**
 * How long a handler stays lacked after a look last found a live worker of the partition announcing it:
 * a rollback stops the newer build's workers, and the older build's replicas remove the newer build's
 * @DistributedCron rows only once its declaration set lapses (docs/spec.md §5.1: up to 4 × cronRefreshMs,
 * 20 s by default) — as late as, or later than, the handlers' announcement lapses (15 s, then a look).
 * Remembered, the rows' slots meanwhile are passed on (claim.lua 'passed', and each then ends `stale`
 * when its row goes) instead of failing `unknown-handler`. No longer than claim.lua's PASS_FOR_MS, past
 * which a run is claimed anyway. It also covers a look Redis answered late or not at all (announcements
 * may have expired meanwhile while their workers live on).
 */
export const HANDLERS_REMEMBERED_FOR_MS = 60_000;

export interface HandlerPresenceOptions {
  redis: RedisClient;
  keys: SundialKeys;
  clock: ClusterClock;
  /** the partitions whose fire jobs this runner consumes */
  partitions: readonly number[];
  /** the runner's handlers (their names are read at each announcement) */
  handlers: Record<string, unknown>;
  logger: SundialLogger;
  fields: Record<string, unknown>;
}

/**
 * `P:handlers`: member `<partition count>|<served>|<handler>` (served in SUNDIAL_SERVE_PARTITIONS'
 * notation; runners of one build and one `serve` share their members), score the time (Redis's clock) its
 * announcement lasts to. Every HANDLERS_ANNOUNCE_EVERY_MS each runner writes its handlers' members, drops
 * the expired ones, keeps the key's TTL and reads the live members — four commands on one key, sent
 * together; a member new to the key is also published on `P:handlers:new`, and every runner looks again
 * at once. A member of another partition count (a repartition under way) covers no partition of this one:
 * its workers consume other queues. A runner that has every announced handler of its partitions (the
 * normal path) lacks none, and its claims carry nothing of this.
 */
export class HandlerPresence {
  private readonly lackingBy = new Map<number, readonly string[]>();
  /** partition → handler lacked → when a look last found it announced (performance.now()) */
  private readonly seenBy = new Map<number, Map<string, number>>();
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** the look on its way, and whether another was asked for meanwhile */
  private looking: Promise<void> | undefined;
  private again = false;
  private firstAnnounced: () => void = () => undefined;
  /** Resolves at the first announcement Redis took: a newer build's rows wait for it (`TimerRunner.handlersAnnounced`). */
  readonly announced: Promise<void> = new Promise((resolve) => (this.firstAnnounced = resolve));

  constructor(private readonly options: HandlerPresenceOptions) {}

  /** Announced and looked once before the runner takes jobs (awaited; a failure is the next look's to retry). */
  async start(): Promise<void> {
    await this.refresh();
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /** Another runner announced a handler new to a partition (`P:handlers`): look again now. */
  othersAnnounced(): void {
    if (this.stopped) return;
    if (this.looking) this.again = true;
    else void this.refresh();
  }

  /** The handlers a live worker of `partition` has and this runner lacks; undefined when none. */
  lacking(partition: number): readonly string[] | undefined {
    return this.lackingBy.get(partition);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      void this.refresh().finally(() => this.schedule());
    }, HANDLERS_ANNOUNCE_EVERY_MS);
    this.timer.unref();
  }

  private refresh(): Promise<void> {
    this.looking ??= this.look().finally(() => {
      this.looking = undefined;
      if (this.again && !this.stopped) {
        this.again = false;
        void this.refresh();
      }
    });
    return this.looking;
  }

  private async look(): Promise<void> {
    const { partitions, handlers } = this.options;
    const own = Object.keys(handlers);
    let live: string[];
    try {
      live = await this.announce(own);
    } catch (error) {
      // what was lacked stays lacked (remembered) until a look answers
      this.options.logger.debug(
        `Sundial runner: could not announce its handlers: ${(error as Error).message}`,
        this.options.fields,
      );
      return;
    }
    this.firstAnnounced();
    const now = performance.now();
    const has = new Set(own);
    const lacked = this.lackedBy(live, has);
    for (const partition of partitions) {
      // a handler announced within HANDLERS_REMEMBERED_FOR_MS (its workers gone, or an announcement
      // expired while its worker lives on) stays lacked; this runner's own handlers never are
      const seen = this.seenBy.get(partition) ?? new Map<string, number>();
      for (const name of lacked.get(partition) ?? []) seen.set(name, now);
      for (const [name, at] of seen)
        if (has.has(name) || now - at > HANDLERS_REMEMBERED_FOR_MS) seen.delete(name);
      if (seen.size > 0) {
        this.seenBy.set(partition, seen);
        this.lackingBy.set(partition, [...seen.keys()].sort());
      } else {
        this.seenBy.delete(partition);
        this.lackingBy.delete(partition);
      }
    }
  }

  /** partition → the handlers live members announce for it that `has` lacks (only partitions with some) */
  private lackedBy(live: readonly string[], has: ReadonlySet<string>): Map<number, Set<string>> {
    const count = this.options.keys.partitions;
    const lacked = new Map<number, Set<string>>();
    for (const member of live) {
      const [memberCount, served, ...name] = member.split('|');
      const handler = name.join('|');
      if (memberCount !== String(count) || has.has(handler)) continue;
      for (const partition of readPartitionRanges(served ?? '', count) ?? []) {
        let names = lacked.get(partition);
        if (!names) lacked.set(partition, (names = new Set()));
        names.add(handler);
      }
    }
    return lacked;
  }

  private async announce(own: readonly string[]): Promise<string[]> {
    const { redis, keys, clock, partitions } = this.options;
    const key = keys.handlers;
    const now = clock.now();
    const until = now + HANDLERS_ANNOUNCED_FOR_MS;
    const served = `${keys.partitions}|${partitionRanges(partitions)}|`;
    const members = own.flatMap((name) => [until, served + name]);
    const [added, , , live] = await Promise.all([
      members.length > 0 ? redis.zadd(key, ...members) : 0,
      redis.zremrangebyscore(key, '-inf', `(${now}`),
      redis.pexpire(key, HANDLERS_ANNOUNCED_FOR_MS),
      redis.zrangebyscore(key, now, '+inf'),
    ]);
    // A handler new to its partitions (a newer build's first worker): the others learn it now, not at
    // their next look, so none of them claims its first runs.
    if (added > 0) await redis.publish(keys.handlersChannel, '1');
    return live;
  }
}
