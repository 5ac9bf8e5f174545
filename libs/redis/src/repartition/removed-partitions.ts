import { setTimeout as delay } from 'node:timers/promises';
import { Queue } from 'bullmq';
import type { RedisClient } from '../infra/connection';
import type { SundialKeys } from '../store/keys';
import { scanPartition } from './scan-partition';

/**
 * What a removed partition holds at the end that means nothing any more: its id counter (every new
 * partition's starts above it since the fence), the list of its live-id bitmaps (`ic`; the bitmaps are
 * spent when empty), the ids moved into it by an earlier repartition (no put
 * comes here again), its remembered answers (those of calls on one key were copied to every new
 * partition; the rest name this partition's share of a call; every write here is fenced anyway) and the
 * records of its fire jobs (`jobs`: they name hand-offs of rows that have moved) and its data marker
 * (`epoch`: once the new count is set, the watches read the markers of its partitions only,
 * infra/data-marker.ts), and its notes for cancelAll's scope records (`kt`, `kept`, `kr`, `scn`: its records
 * were swept before the move, repartition.ts).
 */
const SPENT = /^(?:seq|kt|kept|kr|scn|moved|ic|jobs|epoch|q:.*)$/s;
/** A live-id bitmap (store/live-ids.ts): spent once no bit is set (a set bit is a live id not moved). */
const LIVE_IDS = /^i:/;
/** Kept: it refuses the writes of a process still running with the old count (includes/layout-fence.lua). */
const FENCE = 'layout';
/** Fire jobs in these states could still be taken by a worker of the old count. */
const LIVE_JOBS = ['wait', 'active', 'delayed', 'prioritized', 'waiting-children'] as const;
/** How long the removed partitions' queues may take to run their last (stale) fire jobs. */
const QUEUE_DRAIN_MS = 5000;
const QUEUE_POLL_MS = 100;
/** Names deleted per command. */
const DELETE_BATCH = 1000;

export interface RemovedPartitions {
  /** the Redis names deleted (a queue counts its keys) */
  removed: number;
  /** what was left because it still held something: a partition's keys, or a queue (`P:sundial-fire-{tag}`) */
  left: string[];
}

/**
 * Once every key has moved, deletes what only the partitions of `from` that `to` does not have held
 * (docs/design.md "Repartition", step 7): their spent keys and their BullMQ queues, keeping their
 * layout fence. A partition that still holds anything else (a row, tombstone, ledger, index entry,
 * lease or moving record) is left whole, as is a queue with a fire job not yet run: both are reported.
 * Safe to run again: what is gone is not found again.
 */
export async function removePartitions(
  redis: RedisClient,
  from: SundialKeys,
  to: SundialKeys,
): Promise<RemovedPartitions> {
  const kept = new Set(to.all().map((n) => to.base(n)));
  const dropped = from.all().filter((n) => !kept.has(from.base(n)));
  const results = await Promise.all(dropped.map((n) => removePartition(redis, from, n)));
  return {
    removed: results.reduce((sum, result) => sum + result.removed, 0),
    left: results.flatMap((result) => result.left),
  };
}

async function removePartition(redis: RedisClient, keys: SundialKeys, n: number): Promise<RemovedPartitions> {
  const base = keys.base(n);
  const names = await collect(redis, base);
  const liveIds = names.filter((name) => LIVE_IDS.test(name.slice(base.length)));
  const bits = await Promise.all(liveIds.map((name) => redis.bitcount(name)));
  const emptyBitmaps = new Set(liveIds.filter((_, i) => bits[i] === 0));
  const held = names.filter((name) => {
    const rest = name.slice(base.length);
    return rest !== FENCE && !SPENT.test(rest) && !emptyBitmaps.has(name);
  });
  // Something was not moved: the partition's id counter and fire jobs may still matter to it.
  if (held.length > 0) return { removed: 0, left: held };
  const spent = names.filter((name) => name.slice(base.length) !== FENCE);
  for (let i = 0; i < spent.length; i += DELETE_BATCH)
    await redis.unlink(...spent.slice(i, i + DELETE_BATCH));
  const queue = await removeQueue(redis, keys, n);
  return { removed: spent.length + queue.removed, left: queue.left };
}

/**
 * The partition's BullMQ queue, obliterated once no fire job waits or runs in it. A job left there was
 * added before its timers moved, so its claims answer stale; the old count's workers take it, within
 * QUEUE_DRAIN_MS while they run. Obliterating without `force` refuses a job that became active since.
 */
async function removeQueue(redis: RedisClient, keys: SundialKeys, n: number): Promise<RemovedPartitions> {
  const name = `${keys.bullPrefix}:${keys.queueName(n)}`;
  const queueKeys = await collect(redis, `${name}:`);
  // A Queue on a queue that is gone would write its `meta` again (pause does even when skipped here).
  if (queueKeys.length === 0) return { removed: 0, left: [] };
  const queue = new Queue(keys.queueName(n), {
    connection: redis,
    prefix: keys.bullPrefix,
    skipMetasUpdate: true,
  });
  queue.on('error', () => undefined); // a failure rejects the calls below
  try {
    const deadline = Date.now() + QUEUE_DRAIN_MS;
    while ((await liveJobs(queue)) > 0) {
      if (Date.now() >= deadline) return { removed: 0, left: [name] };
      await delay(QUEUE_POLL_MS);
    }
    await queue.obliterate();
    return { removed: queueKeys.length, left: [] };
  } catch (error) {
    if (error instanceof Error && /Cannot obliterate/.test(error.message))
      return { removed: 0, left: [name] };
    throw error;
  } finally {
    await queue.close();
  }
}

async function liveJobs(queue: Queue): Promise<number> {
  const counts = await queue.getJobCounts(...LIVE_JOBS);
  return Object.values(counts).reduce((sum, count) => sum + count, 0);
}

/** Every name that starts with `base`. */
async function collect(redis: RedisClient, base: string): Promise<string[]> {
  const names = new Set<string>(); // SCAN may return a name twice
  for await (const page of scanPartition(redis, base, '*')) for (const name of page) names.add(name);
  return [...names];
}
