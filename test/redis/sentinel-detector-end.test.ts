import { closeRedis, openRedis, type RedisClient } from '@sundial/redis';
import { type RedisSentinels, startRedisSentinels, waitFor } from '@sundial/testing/harness';
import { Redis } from 'ioredis';

/** The part of a Sentinel connection's connector that opens its socket to the primary. */
interface ConnectorInternals {
  connector: { connect(emitter: unknown): Promise<unknown> };
}

/**
 * A connection through Sentinel follows failovers with a detector: one subscriber connection to each
 * Sentinel, made when its socket to the primary connects, reconnecting every 60 s for as long as it
 * lives. It must end with the connection, however that ends. It did not when the connection ended by
 * QUIT (BullMQ closes its own connections so) or was closed while its socket to the primary was still
 * opening: its Sentinel connections stayed open, then retried every 60 s once the Sentinels were
 * stopped, and the process did not exit (jest hung after test/cluster/start-wait-topologies.test.ts).
 * Counted at the Sentinels themselves: the clients subscribed there.
 */
describe("a Sentinel connection's failover detector", () => {
  let redis: RedisSentinels;
  const admins: Redis[] = [];

  beforeAll(async () => {
    redis = await startRedisSentinels();
    admins.push(...redis.sentinels.map((sentinel) => new Redis(sentinel.url)));
  }, 60_000); // deadline: five redis-servers and the Sentinels knowing each other, on a loaded host

  afterAll(async () => {
    for (const admin of admins) admin.disconnect();
    await redis?.stop();
  });

  /** The connections subscribed at the Sentinels (this suite's detectors: nothing else subscribes). */
  async function subscribedAtSentinels(): Promise<number> {
    const lists = await Promise.all(admins.map((admin) => admin.call('CLIENT', 'LIST') as Promise<string>));
    return lists.join('\n').match(/ cmd=subscribe /g)?.length ?? 0;
  }

  async function noneLeft(): Promise<void> {
    await waitFor(async () => (await subscribedAtSentinels()) === 0, {
      timeoutMs: 5_000, // deadline: a closed socket seen by the Sentinels, on a loaded host
      what: 'no connection left subscribed at the Sentinels',
    });
  }

  it('ends when the connection ends by QUIT', async () => {
    const connection = openRedis(redis.url);
    await new Promise((resolve) => connection.once('failoverSubscribed', resolve));
    expect(await subscribedAtSentinels()).toBe(3);

    await connection.quit(); // as BullMQ closes a connection of its own: no disconnect() follows
    await waitFor(() => connection.status === 'end', { timeoutMs: 5_000, what: 'the connection to end' });
    await noneLeft();
  });

  it('ends when the connection was closed while its socket to the primary opened', async () => {
    const connection: RedisClient = openRedis(redis.url, { lazyConnect: true });
    const events: string[] = [];
    for (const event of ['connect', 'end']) connection.on(event, () => events.push(event));
    const subscribed = new Promise((resolve) => connection.once('failoverSubscribed', resolve));
    // The window is one turn of the event loop, between the primary's address found at a Sentinel and its
    // socket's 'connect': closed right when the look-up hands the socket over, before it connected.
    const { connector } = connection as unknown as ConnectorInternals;
    const lookUp = connector.connect.bind(connector);
    let closing: Promise<void> | undefined;
    connector.connect = async (emitter) => {
      const socket = await lookUp(emitter);
      closing = closeRedis(connection);
      return socket;
    };
    await connection.connect().catch(() => undefined); // "Connection is closed."

    await waitFor(() => connection.status === 'end', { timeoutMs: 5_000, what: 'the connection to end' });
    await closing;
    // the socket did connect after the close began: that 'connect' made a detector, which subscribed
    expect(events).toEqual(['connect', 'end']);
    await subscribed;
    await noneLeft();
  });
});
