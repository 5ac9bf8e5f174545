import type { DataLoss } from './data-loss';
import type { DataMarker } from './data-marker';
import type { ReplicationHistory } from './replication-history';
import type { WritesLost } from './writes-lost';

/** The losses told so far in this process, by their first lost marker's value (data-loss.ts `marker`). */
const toldInThisProcess = new Set<string>();
/** prefix → how many watches that tell a loss (layout-watch.ts) run in this process */
const watchesInThisProcess = new Map<string, number>();

export interface DataLookOptions {
  /** where the watch or client reads the markers */
  marker: DataMarker;
  /** told once a loss (not after `stopped`) */
  onDataLost: (loss: DataLoss) => void;
  stopped: () => boolean;
  /** where the primaries' replication histories are read (the fork of a failover that lost writes) */
  history?: ReplicationHistory;
  /** told once a fork whose lost writes this process saw (not after `stopped`) */
  onWritesLost?: (loss: WritesLost) => void;
  /**
   * the losses told so far, shared by the watches and clients that tell the same process's loss (default
   * process-wide; a test running several "processes" in one gives each its own)
   */
  told?: Set<string>;
}

/**
 * One look at the data markers (DataMarker.check), one at a time — a reconnect's and an interval's side
 * by side would both tell one loss — telling each loss once per process: the standalone worker runs
 * serve's watch and its SundialWorkerModule's, and an app's RedisTimers may look too. A failed look
 * (Redis away) concludes nothing. With `history`, the same look reads the primaries' replication
 * (replication-history.ts) and tells each failover that lost writes this process saw, once per process.
 */
export function dataLook(options: DataLookOptions) {
  const { marker, onDataLost, stopped, history, onWritesLost, told = toldInThisProcess } = options;
  const once = async (): Promise<void> => {
    // The replication first: a look still ends with the markers' reads (tests wait for a watch's `GET`).
    const forks = history ? await history.check().catch(() => []) : [];
    const loss = await marker.check().catch(() => null);
    // A replica that lost everything and was promoted forked too: its loss is said, not its writes'.
    if (stopped()) return;
    // Counters gone back on a Redis that did not restart are a failover to a replica that lacked writes
    // (or a look routed to a shard's old primary still): the replication watch's to tell, with what it
    // lost. A restore is a restart: a replication history this process had not seen.
    const lost = loss?.rewound && (forks.length > 0 || !history?.restarted()) ? null : loss;
    if (lost && !told.has(lost.marker)) {
      told.add(lost.marker);
      onDataLost(lost);
    }
    for (const fork of lost ? [] : forks) {
      if (told.has(fork.fork)) continue;
      told.add(fork.fork);
      onWritesLost?.(fork);
    }
  };
  let checking = Promise.resolve();
  return (): Promise<void> => (checking = checking.then(once));
}

/**
 * A watch that tells a loss runs on `prefix` in this process from now to the returned call: a client's
 * own looks then stop (`watched`), so the loss is said, and counted in `sundial_redis_data_lost_total`,
 * by the watch.
 */
export function watchRuns(prefix: string): () => void {
  watchesInThisProcess.set(prefix, (watchesInThisProcess.get(prefix) ?? 0) + 1);
  let ended = false;
  return () => {
    if (ended) return;
    ended = true;
    watchesInThisProcess.set(prefix, (watchesInThisProcess.get(prefix) ?? 1) - 1);
  };
}

/** Whether a watch that tells a loss runs on `prefix` in this process. */
export function watched(prefix: string): boolean {
  return (watchesInThisProcess.get(prefix) ?? 0) > 0;
}
