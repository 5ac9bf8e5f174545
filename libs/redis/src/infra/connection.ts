import { Cluster, type ClusterOptions, Redis, type RedisOptions } from 'ioredis';
import {
  failFastWhenDown,
  paceSubscriber,
  settleConnect,
  skipEndedSubscriberDisconnects,
} from './cluster-outage';
import { tellNodeCauses } from './cluster-causes';
import { settleClose } from './cluster-close';
import { installSentinelLookUpCause } from './ioredis-sentinel-cause';
import { installIoredisClosures } from './ioredis-closures';
import { installDetectorEndsWithConnection } from './ioredis-detector-end';
import { installClosedSocketDisconnect } from './ioredis-disconnect';
import { installFailoverDuringLookUp } from './ioredis-failover';
import { parseRedisUrl, type RedisTarget } from './redis-url';
import { settledWithin } from './settled-within';

/**
 * Where Redis is: a URL (ACL user and password included), ioredis options, or both as
 * `{ url, ...options }` (docs/spec.md §5.1's `connection: { url }`). The URL names one of three shapes:
 * - `redis://host:port[/db]` or `rediss://…` (TLS): one node;
 * - `redis+cluster://h1:p1,h2:p2` (or `rediss+cluster://`): a Redis Cluster, from any of its nodes;
 * - `redis+sentinel://h1:p1,h2:p2/mastername[/db][?sentinelUsername=u&sentinelPassword=p]` (or
 *   `rediss+sentinel://`, TLS to both): the primary that these Sentinels name, followed across failovers.
 * The options apply to every node connection.
 * Or an existing ioredis client: Sundial then opens its own connections with `duplicate()` (its
 * options, reconnect strategy included, are the host's) and never closes the one it was given.
 */
export type RedisConnection = string | (RedisOptions & { url?: string }) | Redis;

/** A connection to Redis as ioredis gives it: one node (possibly through Sentinel) or a Cluster. */
export type RedisClient = Redis | Cluster;

/**
 * ioredis 6 waits up to 5 s (plus jitter) between reconnect attempts; Sundial keeps ioredis 5's
 * cadence of at most 2 s unless the connection options say otherwise: the dispatcher and workers are
 * back within 2 s of Redis after an outage, and a command issued during one fails after its 20
 * retries in about 10 s instead of 70 s, so closing an app stays within its shutdown deadline.
 */
const reconnectDelayMs = (attempt: number): number => Math.min(attempt * 50, 2_000);

/**
 * Connection options with Sundial's reconnect cadence unless they name a `retryStrategy` of their own:
 * what `openRedis` opens, and what `SundialWorkerModule` gives BullMQ for its fire queues and workers
 * (BullMQ otherwise sets its own, from 1 s up to 20 s between attempts: a worker took fire jobs again
 * up to ~20 s after Redis was back).
 */
export function withReconnectCadence<Options extends RedisOptions & { url?: string }>(
  options: Options,
): Options {
  return { retryStrategy: reconnectDelayMs, ...options };
}

/** ioredis's maxRetriesPerRequest when the options name none. */
const DEFAULT_MAX_RETRIES = 20;

/** Opens the connection `connection` names, with `overrides` (e.g. BullMQ's `maxRetriesPerRequest: null`). */
export function openRedis(connection: RedisConnection, overrides: RedisOptions = {}): RedisClient {
  // Before any command or script is made: ioredis's per-command closures outlive scavenges otherwise;
  // and before any disconnect, which would leave a 2 s timer behind on a socket already closed.
  installIoredisClosures();
  installClosedSocketDisconnect();
  // and before any Sentinel connection: one told of a failover while it looks the primary up follows it
  installFailoverDuringLookUp();
  // and its failover detector's Sentinel connections end with it, however it ends
  installDetectorEndsWithConnection();
  // and a Sentinel that refused its look-up is told by its connection's own error
  installSentinelLookUpCause();
  if (connection instanceof Redis) {
    return withErrorListener(connection.duplicate({ ...followFailovers(connection.options), ...overrides }));
  }
  const { url, ...options } = typeof connection === 'string' ? { url: connection } : connection;
  const target = url === undefined ? undefined : parseRedisUrl(url);
  const merged = withReconnectCadence({ ...options, ...overrides });
  if (target?.kind === 'cluster') return withErrorListener(openCluster(target, merged));
  if (target?.kind === 'sentinel') {
    // The primary is found and re-found through the Sentinels; reconnects to them keep the same cadence.
    const { sentinels, name, options: fromUrl } = target;
    return withErrorListener(
      new Redis(
        followFailovers({ sentinelRetryStrategy: reconnectDelayMs, ...fromUrl, ...merged, sentinels, name }),
      ),
    );
  }
  return withErrorListener(
    target === undefined ? new Redis(followFailovers(merged)) : new Redis(target.url, merged),
  );
}

/**
 * A connection found through Sentinel leaves the old primary as soon as a Sentinel announces the new one
 * (`+switch-master`, ioredis option `failoverDetector`), a host's client's connections too (its options
 * carry ioredis's default, `false`, which cannot be told from a choice). Without it a
 * connection stays on the old primary until Sentinel demotes it, up to ~10 s after a failover that found
 * it alive (`SENTINEL FAILOVER`, a network split that healed): the claims, completions and writes made
 * there meanwhile were acknowledged, then dropped with the old primary's data, and every run of that
 * while ran again (test/cluster/sentinel-failover.test.ts).
 */
export function followFailovers<Options extends RedisOptions>(options: Options): Options {
  return options.sentinels === undefined ? options : { ...options, failoverDetector: true };
}

/** Whether `openRedis(connection)` opens a Redis Cluster: told from the URL, before any socket is opened. */
export function namesCluster(connection: RedisConnection): boolean {
  if (connection instanceof Redis) return false;
  const url = typeof connection === 'string' ? connection : connection.url;
  return url !== undefined && parseRedisUrl(url).kind === 'cluster';
}

/**
 * A Cluster's node connections take the options except the ones ioredis keeps at the top level:
 * the reconnect cadence applies to the cluster as a whole, and a command waiting for a node after a
 * failover is retried on the new topology. While no node answers, the pub/sub connection is re-made
 * at that cadence and commands fail as on one node (cluster-outage.ts). No `slotsRefreshInterval`
 * (ioredis 6.0.0 sets none): each connection moves at its own `MOVED`; the one connection that must find a
 * promotion it sends nothing to, the runner's, asks for the slots itself (finished-jobs.ts).
 */
function openCluster(target: Extract<RedisTarget, { kind: 'cluster' }>, merged: RedisOptions): Cluster {
  const { retryStrategy, enableOfflineQueue, lazyConnect, readOnly: _readOnly, ...redisOptions } = merged;
  const options: ClusterOptions = {
    clusterRetryStrategy: retryStrategy ? (times) => retryStrategy(times) : retryStrategy,
    redisOptions: { ...target.options, ...redisOptions },
    ...(enableOfflineQueue !== undefined && { enableOfflineQueue }),
    // the cluster's own: its node connections open as it connects
    ...(lazyConnect !== undefined && { lazyConnect }),
  };
  return withOutageLimits(new Cluster(target.nodes, options), redisOptions.maxRetriesPerRequest);
}

/**
 * A cluster client's behaviour while no node answers and as they come back (cluster-outage.ts), and at
 * a close while it is not connected (cluster-close.ts), with its nodes' own errors (cluster-causes.ts), on every one Sundial makes and every duplicate of
 * one: BullMQ makes its Queues' and Workers' connections as duplicates of the one it is given.
 */
function withOutageLimits(
  cluster: Cluster,
  maxRetriesPerRequest: number | null = DEFAULT_MAX_RETRIES,
): Cluster {
  paceSubscriber(cluster, reconnectDelayMs);
  skipEndedSubscriberDisconnects(cluster);
  settleConnect(cluster);
  settleClose(cluster);
  tellNodeCauses(cluster);
  // BullMQ's connections (maxRetriesPerRequest: null) wait for Redis however long it takes, as on one node.
  if (maxRetriesPerRequest !== null) failFastWhenDown(cluster, maxRetriesPerRequest);
  const duplicate = cluster.duplicate.bind(cluster);
  cluster.duplicate = (...args: Parameters<Cluster['duplicate']>) => {
    const copy = duplicate(...args);
    return withOutageLimits(copy, copy.options.redisOptions?.maxRetriesPerRequest);
  };
  return cluster;
}

/**
 * Every connection needs an `error` listener: without one ioredis prints a non-JSON
 * `[ioredis] Unhandled error event` stack trace on each reconnect attempt during an outage. The
 * errors themselves are not lost: every command that fails meanwhile rejects, and its caller
 * answers `unavailable` or logs it with its context. `duplicate()` copies no listeners: call this on
 * a duplicate too.
 */
export function withErrorListener<Client extends RedisClient>(redis: Client): Client {
  redis.on('error', () => undefined);
  return redis;
}

/**
 * Another connection to the same place (e.g. a subscriber), with its own error listener (a cluster's
 * duplicate has its outage limits: withOutageLimits). `overrides` apply to a node connection (a
 * cluster's node options stay those of the cluster it copies).
 */
export function duplicateRedis(redis: RedisClient, overrides: RedisOptions = {}): RedisClient {
  return withErrorListener(isCluster(redis) ? redis.duplicate() : redis.duplicate(overrides));
}

/** How long a polite QUIT may wait for its reply before the socket is dropped instead. */
const QUIT_WAIT_MS = 1_000;

/**
 * Closes politely, or drops the socket when Redis cannot be reached to say goodbye: on a connection
 * that is not ready QUIT would wait behind the commands queued for a reconnect (as long as they are
 * retried), and on a frozen Redis (socket open, no answer) it would wait for ever. Dropping the socket
 * also rejects whatever is still queued, and stops the reconnecting: no handle outlives the close.
 */
export async function closeRedis(redis: RedisClient): Promise<void> {
  if (redis.status === 'ready') await settledWithin(redis.quit(), QUIT_WAIT_MS);
  if (redis.status === 'reconnecting' && !isCluster(redis)) dropWhileReconnecting(redis);
  if (redis.status !== 'end') redis.disconnect();
}

/**
 * A connection waiting to reconnect (its socket closed by an outage or a refused AUTH) has no socket to
 * end, but ioredis 6.0.0's disconnect() ends the closed one again: no 'close' event comes, so the client
 * stays `reconnecting` for good, what is queued is never rejected, and its 2 s `disconnectTimeout` timer
 * (cleared only by that event) keeps the process up after the close — jest's "did not exit" and "a worker
 * process has failed to exit gracefully" after test/redis/start-wait.test.ts. ioredis's own path for a
 * client with no socket (status `wait`, a lazy client never connected) ends it at once: it is taken.
 * (redis/ioredis#2169, still open, makes disconnect() do so.) That path skips the connector, so a
 * Sentinel connector's failover detector (ioredis option `failoverDetector`) is stopped here as its
 * disconnect() would. A Cluster's close is cluster-close.ts's.
 */
function dropWhileReconnecting(redis: Redis): void {
  const internals = redis as unknown as {
    setStatus(status: 'wait'): void;
    connector: { failoverDetector?: { cleanup(): void } | null };
  };
  internals.connector.failoverDetector?.cleanup();
  internals.setStatus('wait');
}

/** Whether the connection is a Redis Cluster client (its partitions then spread over the slots). */
export function isCluster(redis: RedisClient): redis is Cluster {
  return redis instanceof Cluster;
}

/** A Cluster's primaries, known once it is ready (a command waits for that, as any does); one node: itself. */
export async function primaries(redis: RedisClient): Promise<Redis[]> {
  if (!(redis instanceof Cluster)) return [redis];
  if (redis.status !== 'ready') await redis.ping();
  return redis.nodes('master');
}
