import {
  ConnectionCause,
  type ConnectionErrorEvent,
  type ErrorEvents,
  openRedis,
  type RedisClient,
  urlForDisplay,
} from '@sundial/redis';
import { Cluster } from 'ioredis';

const PING_TIMEOUT_MS = 1_000;

type Listener = (error: unknown) => void;
type Event = ConnectionErrorEvent | 'ready';

/**
 * A connection used only to answer readiness (is Redis reachable, and not full): it fails fast instead of queueing commands while
 * Redis is away, so a probe never hangs. A connection ioredis ended for good (status `end`: a Sentinel connection ended in a
 * failover, a retry strategy that gave up, a defect) is replaced by a fresh one at the next ping: readiness answered 503 for the
 * process's whole life otherwise, Redis fine all along, and Kubernetes kept the pod out of service.
 */
export class RedisPing implements ErrorEvents {
  private client!: RedisClient;
  /** Until its client's first connect ends (ready, or failed), a ping waits for it rather than fail at once. */
  private connecting!: Promise<void>;
  /** The listeners given to `on`, moved to each client that replaces an ended one. */
  private readonly listeners = new Set<[Event, Listener]>();
  private closed = false;
  /** the connection's own error (ECONNREFUSED, WRONGPASS) where a ping's says only ioredis's "Stream isn't writeable" */
  private readonly cause: ConnectionCause;

  /** `url`: any REDIS_URL shape (one node, redis+cluster://, redis+sentinel://). */
  constructor(private readonly url: string) {
    this.open();
    this.cause = new ConnectionCause(this);
  }

  /**
   * Resolves when Redis answers and can take writes; rejects saying why not: `Redis does not answer at
   * <address>` (its `cause` the connection's error, or no answer within 1 s), that it is full, or that a
   * Redis Cluster reports itself down.
   */
  async ping(): Promise<void> {
    if (this.client.status === 'end' && !this.closed) this.reopen();
    const { client, connecting } = this;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${PING_TIMEOUT_MS} ms`)), PING_TIMEOUT_MS);
    });
    let info: Answers;
    try {
      info = await Promise.race([connecting.then(() => answers(client)), timeout]);
    } catch (error) {
      const cause = error instanceof Error ? this.cause.of(error) : new Error(String(error));
      throw new RedisNotAnswering(urlForDisplay(this.url), cause);
    } finally {
      clearTimeout(timer);
    }
    assertNotFull(info.memory);
    if (info.cluster !== undefined) assertClusterUp(info.cluster);
  }

  /** Its connection's errors: a refused AUTH (WRONGPASS) shows only there, ping() says the stream is shut. */
  on(event: Event, listener: Listener): void {
    this.listeners.add([event, listener]);
    this.client.on(event, listener);
  }

  off(event: Event, listener: Listener): void {
    for (const entry of this.listeners) {
      if (entry[0] === event && entry[1] === listener) this.listeners.delete(entry);
    }
    this.client.off(event, listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.cause.stop();
    this.client.disconnect();
  }

  private open(): void {
    this.client = openRedis(this.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      lazyConnect: true,
      connectionName: 'sundial-health',
    });
    for (const [event, listener] of this.listeners) this.client.on(event, listener);
    // Errors surface through ping(); openRedis adds the listener without which ioredis would log them.
    // Without the offline queue a command sent before the socket is up fails ("Stream isn't writeable"):
    // the app's start then logged a wait for Redis and lost a 500 ms retry with Redis up all along.
    this.connecting = this.client.connect().catch(() => undefined);
  }

  /**
   * Replaces the ended client. Synchronous: the ping that finds it ended swaps in the new one (already
   * connecting) before any other ping looks, so one reopen at most is in flight.
   */
  private reopen(): void {
    const ended = this.client;
    for (const [event, listener] of this.listeners) ended.off(event, listener);
    ended.disconnect();
    this.open();
  }
}

/** A ping Redis did not answer: where, for the operator; why (the connection's own error) as its cause. */
class RedisNotAnswering extends Error {
  constructor(address: string, cause: Error) {
    super(`Redis does not answer at ${address}`, { cause });
  }
}

/** What a ping reads: `INFO memory`, and a Redis Cluster's `CLUSTER INFO` (of the node it asks). */
interface Answers {
  memory: string;
  cluster?: string;
}

async function answers(client: RedisClient): Promise<Answers> {
  if (!(client instanceof Cluster)) return { memory: await client.info('memory') };
  const [memory, cluster] = await Promise.all([client.info('memory'), client.cluster('INFO')]);
  return { memory, cluster };
}

/**
 * A Redis Cluster with a slot no primary serves (a shard's primary down and no replica promoted yet, or
 * none to promote) reports `cluster_state:fail`, and each of its nodes then refuses every command on a
 * key (CLUSTERDOWN): no write can be taken. Its nodes still answer INFO, so readiness said ready all along.
 */
function assertClusterUp(info: string): void {
  const state = /^cluster_state:(\w+)/m.exec(info)?.[1];
  if (state === undefined || state === 'ok') return;
  throw new Error(
    `The Redis Cluster is down (cluster_state:${state}): its nodes refuse every command on a key (CLUSTERDOWN) until each slot has a primary that answers. Bring the failed shard's primary back, or let a replica take over.`,
  );
}

/**
 * A reachable Redis over its maxmemory refuses every write with OOM: not ready, and the probe says
 * why. Memory Redis does not count toward the limit (replication and AOF buffers) is left out, as
 * Redis itself does.
 */
function assertNotFull(info: string): void {
  const field = (name: string) => Number(new RegExp(`^${name}:(\\d+)`, 'm').exec(info)?.[1] ?? 0);
  const maxmemory = field('maxmemory');
  const counted = field('used_memory') - field('mem_not_counted_for_evict');
  if (maxmemory > 0 && counted > maxmemory) {
    throw new Error(
      `Redis is out of memory: ${counted} bytes used of maxmemory ${maxmemory}, so every write is refused (OOM). Free memory or raise maxmemory.`,
    );
  }
}
