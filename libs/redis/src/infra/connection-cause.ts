/**
 * Where a connection reports its errors: `error`, and on a Cluster `node error`, where its node
 * connections' errors go (a refused AUTH among them; the cluster itself then says only that it is not
 * ready).
 */
export type ConnectionErrorEvent = 'error' | 'node error';
export const ERROR_EVENTS: readonly ConnectionErrorEvent[] = ['error', 'node error'];

/**
 * A connection's error events, where a refused AUTH shows (a queued ping may only say max retries), and
 * its `ready` (ioredis's and a Cluster's), which says the outage they named is over.
 */
export interface ErrorEvents {
  on?(event: ConnectionErrorEvent | 'ready', listener: (error: unknown) => void): unknown;
  off?(event: ConnectionErrorEvent | 'ready', listener: (error: unknown) => void): unknown;
}

/**
 * What ioredis (or a ping here) says when it gives a command up, not why: `Reached the max retries per
 * request limit`, `Stream isn't writeable`, `Connection is closed.`, a Cluster's `None of startup nodes is
 * available`, no answer. None carries the connection's error (ioredis 6.0 errors/MaxRetriesPerRequestError.js
 * takes only the count): the connection's own `error` event does (`connect ECONNREFUSED 127.0.0.1:6390`,
 * `connect ETIMEDOUT`, `getaddrinfo ENOTFOUND host`), so ConnectionCause names the last one of those instead.
 */
const WRAPPERS = [
  'Reached the max retries per request limit',
  "Stream isn't writeable",
  'Connection is closed.',
  'None of startup nodes is available',
  "Cluster isn't ready",
  'no answer',
  // ioredis's commandTimeout (the CLI's repartition sets it): a command queued while Redis is away
  'Command timed out',
];
/** ioredis's ClusterAllFailedError: every node failed to give the cluster's slots. */
const SLOTS_FAILED = 'Failed to refresh slots cache';

/** Not `instanceof Error`: a socket's error is made by Node's own realm (another Error under jest). */
function isError(error: unknown): error is Error {
  return typeof (error as Error | undefined)?.message === 'string';
}

function isWrapper(error: Error): boolean {
  return (
    error.name === 'MaxRetriesPerRequestError' || WRAPPERS.some((start) => error.message.startsWith(start))
  );
}

/**
 * Why a command on `connection` failed, when the command's own error is only ioredis's wrapper: the last
 * error the connection reported that says more (a start's wait for Redis, wait-for-redis.ts, and for its
 * subscription, subscription.ts, fail naming it). Listens from construction until `stop`. A `ready`
 * forgets it: a long-lived connection's next outage must not be named by the error of an earlier one.
 */
export class ConnectionCause {
  private last: Error | undefined;

  constructor(private readonly connection: ErrorEvents) {
    for (const event of ERROR_EVENTS) connection.on?.(event, this.seen);
    connection.on?.('ready', this.forget);
  }

  /** `error` itself, or if it is a wrapper, the last error the connection reported that is not one. */
  of(error: Error): Error {
    return isWrapper(error) && this.last ? this.last : error;
  }

  stop(): void {
    for (const event of ERROR_EVENTS) this.connection.off?.(event, this.seen);
    this.connection.off?.('ready', this.forget);
  }

  private readonly forget = (): void => {
    this.last = undefined;
  };

  private readonly seen = (error: unknown): void => {
    if (!isError(error) || isWrapper(error)) return;
    // A Cluster none of whose nodes gave its slots: ioredis says only that (`Failed to refresh slots
    // cache.`), after each node's own error (cluster-causes.ts) — kept only while none of those is known.
    if (error.message.startsWith(SLOTS_FAILED)) this.last ??= error;
    else this.last = error;
  };
}
