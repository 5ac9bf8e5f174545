import type { RedisClient } from '@sundial/redis';
import { type RedisServer, startRedis, startRedisCluster, waitFor } from '@sundial/testing/harness';
import Redis from 'ioredis';
import { RedisPing } from './redis-ping';

/**
 * docs/spec.md §6.2: readiness pings Redis through RedisPing. A client ioredis ended for good (status `end`:
 * a Sentinel connection ended in a failover, a retry strategy that gave up) was never reopened: every
 * ping failed ("Connection is closed") for the process's life, Redis fine all along.
 */
describe('RedisPing whose client ioredis ended for good', () => {
  let redis: RedisServer;
  let raw: Redis;
  let ping: RedisPing;

  beforeEach(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
    ping = new RedisPing(redis.url);
    await ping.ping();
  });

  afterEach(async () => {
    await ping.close();
    raw.disconnect();
    await redis.stop();
  });

  /** Ends the ping's client as ioredis does when it gives up on it: status `end`, no reconnect. */
  async function endClient(): Promise<void> {
    const { client } = ping as unknown as { client: RedisClient };
    const ended = new Promise((resolve) => client.once('end', resolve));
    client.disconnect();
    await ended;
    expect(client.status).toBe('end');
  }

  const healthConnections = async () =>
    ((await raw.client('LIST')) as string)
      .split('\n')
      .filter((line) => line.includes(' name=sundial-health '));

  it('answers again at the next ping, through one fresh connection however many pings ask', async () => {
    await endClient();
    await Promise.all([ping.ping(), ping.ping(), ping.ping()]);
    await ping.ping();
    expect(await healthConnections()).toHaveLength(1);
  });

  it('moves the listeners given to `on` to the fresh connection, and a closed ping stays closed', async () => {
    const errors: unknown[] = [];
    ping.on('error', (error) => errors.push(error));
    await endClient();
    await ping.ping();
    redis.kill();
    // its reconnects are refused: each says so on the fresh connection
    await waitFor(() => errors.length > 0, { what: "the fresh connection's error" });
    await ping.close();
    await expect(ping.ping()).rejects.toThrow();
  });
});

/**
 * docs/spec.md §6.2: `/health/ready`'s detail on a Redis that is away said ioredis's "Stream isn't
 * writeable and enableOfflineQueue options is false"; it says Redis does not answer at its address, the
 * connection's own error as the cause.
 */
describe('RedisPing on a Redis that is away', () => {
  it('rejects saying Redis does not answer at its address (password hidden), the cause apart', async () => {
    const redis = await startRedis();
    const url = redis.url.replace('redis://', 'redis://:secret@');
    const ping = new RedisPing(url);
    try {
      await ping.ping().catch(() => undefined); // connected (its AUTH refused or not: the server has no password)
      const refused: unknown[] = [];
      ping.on('error', (error) => {
        if (/ECONNREFUSED/.test((error as Error).message)) refused.push(error);
      });
      redis.kill();
      await waitFor(() => refused.length > 0, { what: 'a reconnect refused' });
      const error = await ping.ping().then(
        () => new Error('answered'),
        (error: Error) => error,
      );
      expect(error.message).toBe(`Redis does not answer at redis://***@127.0.0.1:${redis.port}`);
      expect((error.cause as Error).message).toMatch(/^connect ECONNREFUSED 127\.0\.0\.1:\d+$/);
    } finally {
      await ping.close();
      await redis.stop();
    }
  });
});

/**
 * docs/spec.md §6.2: a Redis Cluster with a slot no primary serves reports `cluster_state:fail` and refuses
 * every command on a key (CLUSTERDOWN); its nodes still answer INFO, and readiness said ready all along.
 */
describe('RedisPing on a Redis Cluster that reports itself down', () => {
  it('rejects saying so, and answers again once the cluster is whole', async () => {
    const cluster = await startRedisCluster(1);
    const admin = new Redis(cluster.nodes[0].url);
    const ping = new RedisPing(cluster.url);
    const state = async (wanted: string) =>
      waitFor(async () => (await admin.cluster('INFO')).includes(`cluster_state:${wanted}`), {
        what: `cluster_state:${wanted}`,
      });
    try {
      await ping.ping();
      await admin.cluster('DELSLOTS', 0); // slot 0 served by no primary
      await state('fail');
      await expect(admin.set('{a}k', 'v')).rejects.toThrow(/^CLUSTERDOWN/);
      await expect(ping.ping()).rejects.toThrow(/^The Redis Cluster is down \(cluster_state:fail\)/);
      await admin.cluster('ADDSLOTS', 0);
      await state('ok');
      await ping.ping();
    } finally {
      await ping.close();
      admin.disconnect();
      await cluster.stop();
    }
  }, 30_000);
});
