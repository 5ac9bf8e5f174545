import { OptionReader, refusals, type SundialError, type SundialLogger } from '@sundial/core';
import { SundialKeys } from '../store/keys';
import { closeRedis, openRedis, type RedisConnection, withErrorListener } from './connection';
import { dataLook, watchRuns } from './data-look';
import type { DataLoss } from './data-loss';
import { DataMarker } from './data-marker';
import { readLayout } from './partition-count';
import { ReplicationHistory } from './replication-history';
import type { WritesLost } from './writes-lost';
import { DEFAULT_LAYOUT_WATCH_MS } from '../option-defaults';

export interface PartitionCountWatch {
  /** where the timers are, and the count this process runs with */
  connection: RedisConnection;
  prefix?: string;
  partitions?: number;
  /** how often to look (default 5 s; the apps: SUNDIAL_LAYOUT_WATCH_MS) */
  intervalMs?: number;
  /**
   * called once when a finished repartition replaced our count: the refusal a restart would meet;
   * without it the count is not looked at (an app embedding the worker: only the data is watched)
   */
  onReplaced?: (refusal: SundialError) => void;
  /**
   * called when Redis lost data this process had seen (data-marker.ts: `P:epoch` or a partition's
   * `P:{pN}:epoch`), once a loss; the process that wrote the new marker has published a `reset` event
   * (`count` 0) first, so that @DistributedCron and schedules-file rows are registered again
   */
  onDataLost?: (loss: DataLoss) => void;
  /**
   * called, with `onDataLost`, when the primary (of a shard) was promoted from a replica that lacked
   * writes this process saw on the old one (replication-history.ts), once a failover; the first process
   * to tell it has published a `reset` event (`count` 0)
   */
  onWritesLost?: (loss: WritesLost) => void;
  /**
   * the losses told so far (by marker), shared by the watches that tell the same process's loss: the
   * standalone worker runs serve's watch and its SundialWorkerModule's, and says the loss once (default
   * process-wide; a test running several "processes" in one gives each its own)
   */
  told?: Set<string>;
}

/** The watch connection's CLIENT SETNAME. */
export const WATCH_CONNECTION = 'sundial-watch';

/**
 * For a long-running process (the apps' `serve`, SundialWorkerModule): a repartition leaves the processes
 * of the old count safe — their writes are fenced off, their fire path acts on rows where they are — but
 * they no longer serve every partition. Once `P:partitions` holds another count (and no repartition is
 * under way), `onReplaced` is told, once; the apps then shut down and are started again with the new
 * count. The same looks, and each (re)connect, check that Redis still holds the data this process saw
 * (`onDataLost`): the markers `P:epoch` and `P:{pN}:epoch` of every partition of the stored count, one GET
 * each sent side by side (one round trip per shard), then `P:partitions` and `P:repartition`, read once
 * a look for both watches. Resolves a stop function once the first look is done (or failed): a process
 * started moments before Redis lost its data tells it too — the apps report ready only after it, and a
 * watch that first looked after the loss would take the new markers for a first start. A failed look
 * (Redis away) is tried again at the next interval.
 */
export async function watchPartitionCount(options: PartitionCountWatch): Promise<() => Promise<void>> {
  // the looks' period is a Node timer: past the longest one it looked every ms (before a connection opens)
  OptionReader.of('watchPartitionCount', options, '{ connection }').timerMs('intervalMs', 1, '5000');
  const keys = new SundialKeys(options.prefix, options.partitions);
  // Named, as the health check's is: CLIENT LIST tells it from the others (tests wait for its first look).
  const redis = withErrorListener(openRedis(options.connection, { connectionName: WATCH_CONNECTION }));
  const marker = new DataMarker(redis, keys);
  let stopped = false;
  const { onDataLost, onWritesLost, told } = options;
  const history = onWritesLost ? new ReplicationHistory(redis, keys) : undefined;
  const checkData = onDataLost
    ? dataLook({ marker, onDataLost, history, onWritesLost, told, stopped: () => stopped })
    : null;
  const watching = onDataLost ? watchRuns(keys.prefix) : () => undefined;
  // The first look now (its commands wait for the connect); 'ready' after the first: a reconnect (a
  // restarted Redis).
  const first = checkData?.();
  if (checkData) redis.once('ready', () => redis.on('ready', () => void checkData()));
  const look = async (): Promise<void> => {
    if (checkData) await checkData();
    if (!options.onReplaced) return;
    // The data check has just read P:partitions and P:repartition (after its markers): one read a look.
    const read = checkData ? marker.lastLayout() : undefined;
    const { count, repartition } =
      read ?? (await readLayout(redis, keys).catch(() => ({ count: 0, repartition: null })));
    if (stopped || repartition || !count || count === keys.partitions) return;
    stopped = true;
    clearInterval(timer);
    options.onReplaced(refusals.partitionCount(keys.prefix, count, keys.partitions));
  };
  const timer = setInterval(() => void look(), options.intervalMs ?? DEFAULT_LAYOUT_WATCH_MS);
  timer.unref();
  await first;
  return async () => {
    stopped = true;
    watching();
    clearInterval(timer);
    await closeRedis(redis);
  };
}

/**
 * What every process that watches says of a loss (docs/operations.md "SundialRedisDataLost"): one error
 * line with what happened, since when and the fix, and `sundial_redis_data_lost_total` counted.
 */
export function reportDataLoss(
  logger: Pick<SundialLogger, 'error'>,
  metrics: { dataLost(): void },
): (loss: DataLoss) => void {
  return ({ message, fix, since, prefix, partitions, all }) => {
    const where = all ? {} : { partitions };
    logger.error(message, { fix, prefix, since: new Date(since).toISOString(), ...where });
    metrics.dataLost();
  };
}

/**
 * What every process that watches says of a failover that lost writes (docs/operations.md
 * "SundialRedisWritesLost"): one error line, `sundial_redis_writes_lost_total` counted.
 */
export function reportWritesLost(
  logger: Pick<SundialLogger, 'error'>,
  metrics: { writesLost(): void },
): (loss: WritesLost) => void {
  return ({ message, fix, prefix, bytes, changes, since, until, primary }) => {
    const window = { since: new Date(since).toISOString(), until: new Date(until).toISOString() };
    logger.error(message, { fix, prefix, primary, bytes, changes, ...window });
    metrics.writesLost();
  };
}
