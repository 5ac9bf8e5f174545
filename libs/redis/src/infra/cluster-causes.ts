import { type Cluster, type Redis, ReplyError } from 'ioredis';

/** The parts of ioredis 6.0.0's Cluster that find its slots and check it is ready. */
interface ClusterInternals {
  /** asks `node` for CLUSTER SLOTS on a duplicate of it, whose own errors ioredis ignores */
  getInfoFromNode?: (node: Redis | undefined, callback: (error?: Error | null) => void) => void;
  /** CLUSTER INFO once the slots are known: an error or `fail` makes the cluster reconnect */
  readyCheck?: (callback: (error?: Error | null, state?: string) => void) => void;
}

/**
 * Makes a Redis Cluster client say why its nodes failed it, where ioredis 6.0.0 keeps the cause to
 * itself, so a start's wait for Redis (wait-for-redis.ts, connection-cause.ts) names it:
 * - Each node asked for the slots is asked on a duplicate connection whose errors ioredis drops: a node
 *   refusing the connection reported only `Connection is closed.` (as `node error`), and the cluster
 *   `Failed to refresh slots cache.` — the line an operator read for 30 s. The node's `node error` (and
 *   ClusterAllFailedError's `lastNodeError`) now carry that connection's own error
 *   (`connect ECONNREFUSED 127.0.0.1:7001`, `WRONGPASS …`).
 * - A ready check Redis refuses (an ACL user without `cluster|info`: `NOPERM …`) ioredis only logs at
 *   debug level before it reconnects, for ever: the start waited out its bound saying `no answer yet`.
 *   The refusal is now a `node error`, which a start fails on at once as on any refusal that is not an
 *   outage; a NOPERM names the grant and where the docs list it.
 * With an ioredis whose Cluster lacks these internals, nothing is changed.
 */
export function tellNodeCauses(cluster: Cluster): void {
  const internals = cluster as unknown as ClusterInternals;
  const { getInfoFromNode, readyCheck } = internals;
  if (typeof getInfoFromNode === 'function') {
    internals.getInfoFromNode = (node, callback) => {
      if (!node || typeof node.duplicate !== 'function') return getInfoFromNode.call(cluster, node, callback);
      let socketError: Error | undefined;
      // ioredis reads only `duplicate` of the node it is given: a stand-in that hears the duplicate's errors
      const heard = Object.create(node) as Redis;
      heard.duplicate = (...args: Parameters<Redis['duplicate']>) => {
        const copy = node.duplicate(...args);
        copy.on('error', (error: Error) => (socketError = error));
        return copy;
      };
      getInfoFromNode.call(cluster, heard, (error) => callback(error ? (socketError ?? error) : error));
    };
  }
  if (typeof readyCheck === 'function') {
    internals.readyCheck = (callback) =>
      readyCheck.call(cluster, (error, state) => {
        if (error instanceof ReplyError) cluster.emit('node error', refusedReadyCheck(error as Error));
        callback(error, state);
      });
  }
}

/** A ready check's refusal, a NOPERM saying which grant is missing and where the docs list it. */
function refusedReadyCheck(error: Error): Error {
  if (!error.message.startsWith('NOPERM')) return error;
  return new ReplyError(
    `${error.message} (ioredis's ready check of a Redis Cluster sends CLUSTER INFO: grant the user +cluster|info on every node, docs/operations.md "A least-privilege ACL user")`,
  );
}
