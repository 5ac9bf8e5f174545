import { refusals, type SundialError } from '@sundial/core';
import { SundialKeys } from '../store/keys';
import { type DataLoss, DataMarker } from './data-marker';
import {
  closeRedis,
  openRedis,
  type RedisClient,
  type RedisConnection,
  withErrorListener,
} from './connection';

/**
 * A repartition under way (`P:repartition`, docs/design.md "Repartition"): `preparing` while the old
 * count's writes are fenced off, `moving` once processes with the new count may work.
 */
export interface RepartitionRecord {
  from: number;
  to: number;
  state: 'preparing' | 'moving';
  startedAt: number;
}

/** What Redis says of the layout: the stored count, and the repartition under way (or null). */
export interface StoredLayout {
  count: number;
  repartition: RepartitionRecord | null;
}

export async function readLayout(redis: RedisClient, keys: SundialKeys): Promise<StoredLayout> {
  const [count, repartition] = await Promise.all([
    redis.get(keys.partitionCount),
    redis.get(keys.repartition),
  ]);
  return {
    count: Number(count),
    repartition: repartition ? (JSON.parse(repartition) as RepartitionRecord) : null,
  };
}

/**
 * The partition count is part of the data: a key's partition is `fnv1a32(key) mod P`, so a process
 * with another P would look for rows where they are not, create a second live row for a key, and leave
 * the first one firing. The first process to start on a prefix records its P (`P:partitions`); every
 * later one must have the same, or it refuses to start — except during a repartition, where processes
 * with the new count join it (resolves the repartition they join, else null) and the old count is refused.
 */
export async function checkPartitionCount(
  redis: RedisClient,
  keys: SundialKeys,
): Promise<RepartitionRecord | null> {
  await redis.set(keys.partitionCount, String(keys.partitions), 'NX');
  const { count, repartition } = await readLayout(redis, keys);
  const mine = keys.partitions;
  if (repartition) {
    if (repartition.to === mine && repartition.state === 'moving') return repartition;
    const { from, to, state } = repartition;
    throw refusals.repartitionUnderway(keys.prefix, from, to, mine, state === 'preparing');
  }
  if (count !== mine) throw refusals.partitionCount(keys.prefix, count, mine);
  return null;
}

export interface PartitionCountWatch {
  /** where the timers are, and the count this process runs with */
  connection: RedisConnection;
  prefix?: string;
  partitions?: number;
  /** how often to look (default 5 s) */
  intervalMs?: number;
  /** called once when a finished repartition replaced our count: the refusal a restart would meet */
  onReplaced: (refusal: SundialError) => void;
  /**
   * called when Redis lost the data this process had seen (data-marker.ts), once a loss; a `reset` event
   * (`count` 0) is published first, so that @DistributedCron and schedules-file rows are registered again
   */
  onDataLost?: (loss: DataLoss) => void;
}

const DEFAULT_WATCH_MS = 5000;

/**
 * For a long-running process (the apps' `serve`): a repartition leaves the processes of the old count
 * safe — their writes are fenced off, their fire path acts on rows where they are — but they no longer
 * serve every partition. Once `P:partitions` holds another count (and no repartition is under way),
 * `onReplaced` is told, once; the apps then shut down and are started again with the new count.
 * The same looks, and each (re)connect, check that Redis still holds the data this process saw
 * (`onDataLost`). Resolves a stop function. A failed look (Redis away) is tried again at the next interval.
 */
export function watchPartitionCount(options: PartitionCountWatch): () => Promise<void> {
  const keys = new SundialKeys(options.prefix, options.partitions);
  const redis = withErrorListener(openRedis(options.connection));
  const marker = new DataMarker(redis, keys);
  let stopped = false;
  const checkDataOnce = async (): Promise<void> => {
    const loss = await marker.check().catch(() => null);
    if (!loss || stopped) return;
    const reset = { type: 'reset', id: '', key: '', version: 0, kind: null, at: Date.now(), count: 0 };
    await redis.publish(keys.eventsChannel, JSON.stringify(reset)).catch(() => undefined);
    options.onDataLost?.(loss);
  };
  // One check at a time: a reconnect's and an interval's, side by side, would both tell one loss.
  let checking = Promise.resolve();
  const checkData = (): Promise<void> => (checking = checking.then(checkDataOnce));
  // 'ready': the first connect (the marker is recorded), and each reconnect (a restarted Redis).
  if (options.onDataLost) redis.on('ready', () => void checkData());
  const look = async (): Promise<void> => {
    if (options.onDataLost) await checkData();
    const { count, repartition } = await readLayout(redis, keys).catch(() => ({
      count: 0,
      repartition: null,
    }));
    if (stopped || repartition || !count || count === keys.partitions) return;
    stopped = true;
    clearInterval(timer);
    options.onReplaced(refusals.partitionCount(keys.prefix, count, keys.partitions));
  };
  const timer = setInterval(() => void look(), options.intervalMs ?? DEFAULT_WATCH_MS);
  timer.unref();
  return async () => {
    stopped = true;
    clearInterval(timer);
    await closeRedis(redis);
  };
}
