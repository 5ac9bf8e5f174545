import type { Cluster } from 'ioredis';

/** The parts of ioredis 6.0.0's Cluster that its close goes through. */
interface ClusterInternals {
  setStatus?: (status: string) => void;
  /** ends the cluster (status `end`, its offline queue rejected) once it was closed by hand */
  handleCloseEvent?: (reason?: Error) => void;
}

/**
 * Makes a Redis Cluster client's close (`disconnect()`, `quit()`) end it, whatever it was doing.
 * ioredis 6.0.0 ends a closed cluster when its pool of node connections drains: the last one ending
 * makes it `close`, then `end`. A cluster closed while it held no node connection — between two
 * reconnect attempts (every node refused it: status `reconnecting`), or still resolving its startup
 * nodes' host names (`connecting`) — has nothing to drain: it stayed `disconnecting` for good, never
 * emitted 'end', and whatever it had queued (a start's PING) was never answered. So a
 * `RedisTimers.connect()`, `Dispatcher.start()` or `TimerRunner.start()` waiting for a Cluster that was
 * down when it was closed (a SIGTERM during boot) did not see the close (`status` `end`): it waited out
 * its whole `startWaitMs` and then blamed Redis; BullMQ's `disconnect()`, which waits for 'end', never
 * returned. Such a close now ends the cluster as ioredis ends one closed before it ever connected.
 * And a pool of several nodes drains once per node connection that ends after the others were dropped
 * (each 'end' finds the pool empty): the cluster went `end`, then back to `close` with the second, and a
 * start's check for `end` missed the close. A cluster that has ended stays `end` until it connects again.
 * With an ioredis whose Cluster lacks these internals, nothing is changed.
 */
export function settleClose(cluster: Cluster): void {
  const internals = cluster as unknown as ClusterInternals;
  const { setStatus, handleCloseEvent } = internals;
  if (typeof setStatus !== 'function' || typeof handleCloseEvent !== 'function') return;
  internals.setStatus = (status) => {
    if (status !== 'close' || cluster.status !== 'end') setStatus.call(cluster, status);
  };
  const endIfNothingToDrain = (before: string, hadNodes: boolean): void => {
    // 'wait' (never connected) ioredis ends itself; with node connections, their drain ends it
    if (before === 'wait' || hadNodes || cluster.status !== 'disconnecting') return;
    internals.setStatus?.('close');
    handleCloseEvent.call(cluster);
  };
  const disconnect = cluster.disconnect.bind(cluster);
  cluster.disconnect = (reconnect = false) => {
    const [before, hadNodes] = [cluster.status, cluster.nodes().length > 0];
    disconnect(reconnect);
    // reconnect: true is ioredis's own retry after a refused ready check, which it goes on with
    if (!reconnect) endIfNothingToDrain(before, hadNodes);
  };
  const quit = cluster.quit.bind(cluster);
  cluster.quit = (...args: Parameters<Cluster['quit']>) => {
    const [before, hadNodes] = [cluster.status, cluster.nodes().length > 0];
    const quitting = quit(...args);
    endIfNothingToDrain(before, hadNodes);
    return quitting;
  };
}
