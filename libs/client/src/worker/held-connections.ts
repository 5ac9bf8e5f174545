import type { ConnectionOptions } from 'bullmq';
import { type Cluster, Redis, type RedisOptions } from 'ioredis';
import { closeRedis, openRedis, type RedisClient, type RedisConnection } from '@sundial/redis';

export const HELD_CONNECTIONS = Symbol('sundial:held-connections');

/** BullMQ's reconnect back-off for connection options naming none (its redis-connection.js): 1 s to 20 s. */
const bullBackOff = (times: number): number => Math.max(Math.min(Math.exp(times), 20_000), 1_000);

/** What a BullModule config (`BullModule.forRoot(configKey, …)`) gives as its connection. */
type BullConnection = ConnectionOptions | undefined;

/**
 * The fire queues' connections, held shut until the worker starts (docs/spec.md §5.1). BullMQ opens a
 * Queue's and a Worker's connections in their constructors, which @nestjs/bullmq calls as Nest makes
 * the module (its queue providers, its BullRegistrar's onModuleInit); an app whose boot then fails
 * (a provider of its own throwing in onModuleInit) gets no shutdown hook, and those sockets kept its
 * process up. So BullMQ is given one client per module, made with `lazyConnect`, whose `connect()` (and
 * that of every duplicate BullMQ makes of it, the workers' own and blocking connections) waits until
 * `open()`, which SundialWorker calls first thing in its start; a connection closed before then never
 * opens. No command waits on it past the start: the fire path is unchanged.
 */
export class HeldConnections {
  private opening: () => void = () => undefined;
  private readonly opened = new Promise<void>((resolve) => (this.opening = resolve));
  private readonly made: RedisClient[] = [];
  private sundial: RedisClient | undefined;
  private shared: RedisClient | undefined;

  /** Lets every held connection open (idempotent). */
  open(): void {
    this.opening();
  }

  /**
   * The client BullMQ is given for SundialModule's `connection` (shared by the partition queues; their
   * workers duplicate it): with the `maxRetriesPerRequest: null` BullMQ's workers need; of a URL or
   * options, Sundial's reconnect cadence unless they name a `retryStrategy` (BullMQ's back-off, 1 s
   * growing to 20 s, kept the workers from fire jobs for up to ~20 s after an outage); a Sentinel
   * connection following a failover at once; a Cluster's outage limits (openRedis, which also reads the
   * Cluster and Sentinel URLs BullMQ cannot); of a host's client, a duplicate with its options.
   */
  forSundial(connection: RedisConnection): RedisClient {
    this.sundial ??= this.hold(openRedis(connection, { maxRetriesPerRequest: null, lazyConnect: true }));
    return this.sundial;
  }

  /**
   * The client BullMQ is given for a `BullModule.forRoot(configKey, …)` connection: of options, one made
   * from them as BullMQ makes it (its back-off when they name no retryStrategy); of a client, a
   * duplicate (BullMQ duplicates it for its workers anyway); nothing when the config names no
   * connection (@nestjs/bullmq's own error then).
   */
  forShared(connection: BullConnection): RedisClient | undefined {
    if (connection === undefined || connection === null) return undefined;
    this.shared ??= this.sharedClient(connection);
    return this.shared;
  }

  private sharedClient(connection: NonNullable<BullConnection>): RedisClient {
    if (isCluster(connection)) {
      const redisOptions = { ...connection.options.redisOptions, maxRetriesPerRequest: null };
      return this.hold(connection.duplicate(undefined, { lazyConnect: true, redisOptions }));
    }
    if (connection instanceof Redis) {
      return this.hold(openRedis(connection, { maxRetriesPerRequest: null, lazyConnect: true }));
    }
    const { url, ...options } = connection as RedisOptions & { url?: string };
    const given = { retryStrategy: bullBackOff, ...options, maxRetriesPerRequest: null, lazyConnect: true };
    const client = url === undefined ? new Redis(given) : new Redis(url, given);
    client.on('error', () => undefined); // BullMQ's listener reports them, once its connection is made
    return this.hold(client);
  }

  /** Closes the clients made here (BullMQ leaves a client it was given open); unopened ones end at once. */
  async close(): Promise<void> {
    await Promise.all(this.made.map((client) => closeRedis(client)));
  }

  private hold<Client extends RedisClient>(client: Client): Client {
    this.made.push(client);
    return gate(client, this.opened);
  }
}

/** `client` (lazyConnect), its connect() and its duplicates' waiting for `opened`. */
function gate<Client extends RedisClient>(client: Client, opened: Promise<void>): Client {
  let isOpen = false;
  let endedShut = false;
  /** the one connect that callers while held (BullMQ's init, a first command) share */
  let held: Promise<void> | undefined;
  void opened.then(() => (isOpen = true));
  const connect = client.connect.bind(client) as () => Promise<void>;
  const disconnect = client.disconnect.bind(client) as (reconnect?: boolean) => void;
  const duplicate = client.duplicate.bind(client) as (...args: unknown[]) => Client;
  Object.assign(client, {
    connect: (): Promise<void> => {
      if (isOpen) return connect();
      held ??= opened.then(() => {
        // closed while held (a boot that failed, an app closed before its start): never opens
        if (endedShut) throw new Error('Connection is closed.');
        return connect();
      });
      return held;
    },
    disconnect: (reconnect?: boolean): void => {
      if (!isOpen && !reconnect) endedShut = true;
      disconnect(reconnect);
    },
    duplicate: (...args: unknown[]): Client => gate(duplicate(...args), opened),
  });
  return client;
}

function isCluster(connection: NonNullable<BullConnection>): connection is Cluster {
  return !(connection instanceof Redis) && (connection as { isCluster?: boolean }).isCluster === true;
}
