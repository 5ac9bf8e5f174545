import { hostname } from 'node:os';
import { refusals } from '@sundial/core';
import type { ClusterClock } from '../infra/cluster-clock';
import type { RedisClient } from '../infra/connection';
import { partitionRanges, readPartitionRanges } from '../infra/served-partitions';
import type { SundialKeys } from '../store/keys';

// Why a file of its own: a timer fires only where a dispatcher hands it off, and a partition without one
// fails nothing and logs nothing (its timers just stay pending): the dispatchers say which partitions they
// serve, cheaply, and the runners say when a partition has none (docs/spec.md §4.2;
// dispatcher-presence-watch.ts is the runners' side).

/**
 * How often a dispatcher says it runs: at the end of a pass, at most this often, one round trip (not
 * per fired timer: at 1,000 timers/s, 0.001 commands per timer).
 */
export const ANNOUNCE_EVERY_MS = 3_000;
/** How long one announcement lasts (its score, and the key's TTL): four missed in a row before it goes. */
export const ANNOUNCED_FOR_MS = 15_000;
/**
 * How long a runner lets pass with no dispatcher seen before it warns (`dispatcherGraceMs`): at a
 * cluster's start the dispatcher may come up after the workers.
 */
export const DEFAULT_DISPATCHER_GRACE_MS = 15_000;

/** The least grace: the looks, a third of it apart, stay 100 ms or more apart. */
const MIN_DISPATCHER_GRACE_MS = 300;

/**
 * `dispatcherGraceMs` as given (default DEFAULT_DISPATCHER_GRACE_MS), or the `invalid` refusal of `field`
 * (the option, or the environment variable it was read from).
 */
export function dispatcherGraceOf(value: unknown, field = 'dispatcherGraceMs'): number {
  if (value === undefined) return DEFAULT_DISPATCHER_GRACE_MS;
  if (Number.isSafeInteger(value) && (value as number) >= MIN_DISPATCHER_GRACE_MS) return value as number;
  throw refusals.invalid(
    field,
    `${field} ${JSON.stringify(value) ?? String(value)} is not an integer of at least ${MIN_DISPATCHER_GRACE_MS} (ms the runner lets pass with no dispatcher seen before it warns).`,
    `Write ${field} as an integer of at least ${MIN_DISPATCHER_GRACE_MS}, or leave it out for the default (${DEFAULT_DISPATCHER_GRACE_MS}).`,
  );
}

/**
 * One dispatcher's member of `P:dispatchers`: `<host-pid>|<partition count>|<served>` (served in
 * SUNDIAL_SERVE_PARTITIONS' notation). The count is in it because during a repartition dispatchers of
 * two counts run, and partition 5 of one is not partition 5 of the other.
 */
export function presenceMember(id: string, partitions: number, served: readonly number[]): string {
  return `${id}|${partitions}|${partitionRanges(served)}`;
}

/**
 * The partitions of `count` a member serves: its list when written for that count; every one for a
 * member of another count (a repartition under way: its dispatchers hand off the old layout until the
 * apps of that count stop) or one this version cannot read (written by a later one): a runner then says
 * nothing rather than name partitions it cannot know to be unserved.
 */
export function servedBy(member: string, count: number): readonly number[] | 'all' {
  const fields = member.split('|');
  if (fields.length < 3) return 'all';
  const [memberCount, served] = fields.slice(-2);
  if (memberCount !== String(count)) return 'all';
  return readPartitionRanges(served, count) ?? 'all';
}

/**
 * The dispatcher's side: its member in `P:dispatchers`, scored with the time (Redis's clock) it lasts
 * to, every few seconds at most. The same round trip drops the members of dispatchers gone (score
 * past), and keeps the key's TTL at 15 s, so a prefix whose dispatchers all stopped leaves no key.
 */
export class DispatcherAnnouncer {
  private readonly member: string;
  private lastAt = -Infinity;

  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SundialKeys,
    private readonly clock: ClusterClock,
    served: readonly number[],
  ) {
    this.member = presenceMember(`${hostname()}-${process.pid}`, keys.partitions, served);
  }

  /**
   * At the dispatcher's start, awaited: a started dispatcher is present at once (a cluster's keyspace is
   * then the same before and after its first pass, and the runners' first look already finds it).
   */
  async start(): Promise<void> {
    this.lastAt = performance.now();
    await this.write();
  }

  /** Called after each pass that took from Redis; not awaited, a failure is the next one's to retry. */
  announce(): void {
    const now = performance.now();
    if (now - this.lastAt < ANNOUNCE_EVERY_MS) return;
    this.lastAt = now;
    this.write().catch(() => {
      this.lastAt = -Infinity;
    });
  }

  /**
   * Three commands on one key (one slot on a Redis Cluster), sent together. Not a MULTI: each stands on
   * its own, and a member left past its score is ignored by the runners anyway.
   */
  private async write(): Promise<void> {
    const key = this.keys.dispatchers;
    const now = this.clock.now();
    await Promise.all([
      this.redis.zadd(key, now + ANNOUNCED_FOR_MS, this.member),
      this.redis.zremrangebyscore(key, '-inf', `(${now}`),
      this.redis.pexpire(key, ANNOUNCED_FOR_MS),
    ]);
  }
}
