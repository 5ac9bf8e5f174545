import type { Socket } from 'node:net';
import type { Cluster, Redis } from 'ioredis';
import { closeRedis, openRedis } from '@sundial/redis';
import { type RedisCluster, startRedisCluster, waitFor } from '@sundial/testing/harness';

/** How long the nodes stay down: enough for ~20 re-selections at the reconnect cadence (50 ms × n). */
const DOWN_MS = 12_000;
/** Re-selections to see before counting: each added one more 'close' listener before the fix. */
const RESELECTIONS = 12;

/** The parts of ioredis's Cluster that say which pub/sub connection is which (private in its typings). */
interface SubscriberInternals {
  subscriber: {
    subscriber: Redis | null;
    /** the last connection that subscribed: its channels are re-subscribed on the next one */
    lastActiveSubscriber?: object;
  };
}

/**
 * A subscribed Redis Cluster client whose nodes are all gone re-selects its pub/sub connection again and
 * again; each re-selection disconnected the last connection that subscribed, already ended, and ioredis
 * added a 'close' listener to its closed socket each time: one more per re-selection for as long as the
 * outage lasted (MaxListenersExceededWarning in both apps during test/cluster/cluster-outage.test.ts).
 */
describe('a subscribed Redis Cluster client while every node is down', () => {
  let cluster: RedisCluster;

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  }, 60_000);
  afterAll(async () => {
    await cluster?.stop();
  });

  it('adds no listener per re-selection, and receives messages again once the nodes are back', async () => {
    const client = openRedis(cluster.url) as Cluster;
    const publisher = openRedis(cluster.url);
    const internals = (client as unknown as SubscriberInternals).subscriber;
    const received: string[] = [];
    client.on('message', (_channel: string, message: string) => received.push(message));
    let outage: Promise<void> | undefined;
    try {
      await client.subscribe('news');
      const subscribed = internals.lastActiveSubscriber;
      const socket = (subscribed as { connector?: { stream?: Socket } } | undefined)?.connector?.stream;
      expect(socket).toBeDefined();

      outage = Promise.all(cluster.nodes.map((node) => node.restart(DOWN_MS))).then(() => undefined);
      const selected = new Set<Redis>();
      await waitFor(
        () => {
          if (internals.subscriber) selected.add(internals.subscriber);
          return selected.size > RESELECTIONS;
        },
        {
          timeoutMs: DOWN_MS,
          intervalMs: 10,
          what: `${RESELECTIONS} re-selections of the pub/sub connection`,
        },
      );
      // Still the connection whose channels are re-subscribed; its socket closed when the node went.
      expect(internals.lastActiveSubscriber).toBe(subscribed);
      expect(socket?.destroyed).toBe(true);
      expect(socket?.listenerCount('close')).toBeLessThanOrEqual(2);

      await outage;
      await waitFor(
        async () => {
          await publisher.publish('news', 'back').catch(() => 0);
          return received.includes('back');
        },
        { timeoutMs: 20_000, intervalMs: 200, what: 'a message published once the nodes are back' },
      );
    } finally {
      await outage?.catch(() => undefined);
      await closeRedis(publisher);
      await closeRedis(client);
    }
  }, 60_000);
});
