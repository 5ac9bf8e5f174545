import type { Cluster, Redis } from 'ioredis';

/**
 * What a Redis Cluster client does while none of its nodes answers and as they come back, where
 * ioredis's defaults fail Sundial (issue 12 §3: a scheduler whose cluster vanished spun a core and grew
 * without bound, and its calls hung until the cluster came back; a worker's partition stayed unserved
 * after it came back). All but `settleConnect` reach into ioredis internals, named in
 * `ClusterInternals`; with an ioredis whose Cluster lacks them, nothing is changed.
 */
interface ClusterInternals {
  /** ioredis's ClusterSubscriber: its handler for the end of the pub/sub connection, and its re-selection */
  subscriber?: { onSubscriberEnd?: () => void; selectSubscriber?: () => void; subscriber: Redis | null };
  /** rejects every command waiting in the cluster's offline queue */
  flushQueue?: (error: Error) => void;
}

/** Starts as ioredis's own "Connection is closed.": isConnectionFailure makes it `unavailable`. */
const CLUSTER_DOWN_MESSAGE = 'Connection is closed. (no node of the Redis Cluster answers)';
/** ioredis's own wording, which BullMQ too reads as a connection failure. */
const CLOSED_MESSAGE = 'Connection is closed.';

/**
 * Paces the re-selection of the cluster's pub/sub connection. ioredis opens it without reconnects
 * (`retryStrategy: null`) and, when it ends, at once picks another node and connects again (ioredis
 * PR #1589): with every node down that is a loop without pause — a new connection per refused connect,
 * measured at ~25% of a core and RSS growing ~8 MB/s. Each re-selection now waits `delayMs(attempt)`
 * (the reconnect cadence of the other connections); the count starts again once the cluster is ready.
 */
export function paceSubscriber(cluster: Cluster, delayMs: (attempt: number) => number): void {
  const subscriber = (cluster as unknown as ClusterInternals).subscriber;
  const reselect = subscriber?.onSubscriberEnd;
  if (!subscriber || typeof reselect !== 'function') return;
  let attempts = 0;
  let pending: NodeJS.Timeout | undefined;
  cluster.on('ready', () => (attempts = 0));
  subscriber.onSubscriberEnd = () => {
    clearTimeout(pending);
    // Unref'd: a closed cluster's subscriber is stopped (the re-selection is then a no-op), and the
    // wait must not keep a process alive.
    pending = setTimeout(reselect, delayMs(++attempts)).unref();
  };
}

/**
 * Makes disconnecting an ended pub/sub connection a no-op. Each re-selection disconnects the last
 * connection that subscribed (kept to re-subscribe its channels on the next one), ended or not, and
 * ioredis then adds a 'close' listener to its socket, closed long ago, which never fires: one more per
 * re-selection for as long as no node answers (MaxListenersExceededWarning after 10; ~1,800 an hour at
 * the 2 s cadence), freed only once a new connection has subscribed. An ended connection has no
 * socket left to close, so nothing else is skipped.
 */
export function skipEndedSubscriberDisconnects(cluster: Cluster): void {
  const subscriber = (cluster as unknown as ClusterInternals).subscriber;
  const select = subscriber?.selectSubscriber;
  if (!subscriber || typeof select !== 'function') return;
  subscriber.selectSubscriber = () => {
    select.call(subscriber);
    const selected = subscriber.subscriber;
    if (!selected) return;
    const disconnect = selected.disconnect.bind(selected);
    selected.disconnect = (reconnect?: boolean) => {
      if (selected.status !== 'end') disconnect(reconnect);
    };
  };
}

/**
 * Makes commands fail instead of waiting for as long as the cluster is down. A one-node connection
 * rejects its queued commands after `maxRetries` reconnect attempts (ioredis's maxRetriesPerRequest,
 * ~10 s at the default cadence); a Cluster keeps them in its offline queue until it is ready again,
 * however long that takes, so an HTTP call hung for the whole outage. Here, after `maxRetries` failed
 * attempts to reach any node, the queue is rejected and new commands are refused at once (they then
 * answer `unavailable`), until the cluster is ready again. A shorter blip stays invisible to callers.
 */
export function failFastWhenDown(cluster: Cluster, maxRetries: number): void {
  const internals = cluster as unknown as ClusterInternals;
  if (typeof internals.flushQueue !== 'function') return;
  const queueing = cluster.options.enableOfflineQueue;
  let attempts = 0;
  cluster.on('ready', () => {
    attempts = 0;
    cluster.options.enableOfflineQueue = queueing;
  });
  cluster.on('reconnecting', () => {
    if (++attempts < maxRetries) return;
    cluster.options.enableOfflineQueue = false;
    internals.flushQueue?.call(cluster, new Error(CLUSTER_DOWN_MESSAGE));
  });
}

/**
 * Makes `connect()` settle. When ioredis's ready check refuses an attempt (`CLUSTER INFO` says
 * `cluster_state:fail`, as every node of a cluster that has just restarted does for a while), the
 * cluster reconnects by itself but that attempt's promise never settles (ioredis 6.0.0). BullMQ awaits
 * it to re-make a worker's blocking connection once a blocking read outlived its deadline: after a
 * cluster outage that worker took no job again, its partition unserved until the consumer watchdog
 * replaced it (7 of 18 outages on a loaded host). The promise now also resolves once the cluster is
 * ready, by whichever attempt, and rejects once it has ended (test/redis/cluster-connect.test.ts).
 */
export function settleConnect(cluster: Cluster): void {
  const connect = cluster.connect.bind(cluster);
  // One ready/end listener pair for every call still waiting: ioredis calls connect() again at each
  // reconnect of an outage, and a pair per call passed Node's 10-listener warning (a non-JSON stderr
  // line, as in 8d5b44f) after ten attempts.
  const waiting = new Set<(error?: unknown) => void>();
  const settleAll = (error?: Error): void => {
    for (const settle of [...waiting]) settle(error);
  };
  cluster.on('ready', () => settleAll());
  cluster.on('end', () => settleAll(new Error(CLOSED_MESSAGE)));
  cluster.connect = () =>
    new Promise<void>((resolve, reject) => {
      const settle = (error?: unknown): void => {
        if (!waiting.delete(settle)) return;
        if (error === undefined) resolve();
        else reject(error instanceof Error ? error : new Error(String(error)));
      };
      waiting.add(settle);
      connect().then(() => settle(), settle);
    });
}
