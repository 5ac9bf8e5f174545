import { type Cluster, Redis } from 'ioredis';
import { closeRedis, openRedis } from '@sundial/redis';
import { type RedisCluster, startRedisCluster, waitFor } from '@sundial/testing/harness';

/** How long a reconnect may take once the cluster is whole again (reconnect cadence: at most 2 s). */
const READY_WITHIN_MS = 10_000;

/**
 * A Cluster client's `connect()` settles, also when its ready check finds `cluster_state:fail` (every
 * node of a cluster that has just restarted reports it for a while): ioredis then drops the attempt and
 * reconnects by itself, and the attempt's promise stayed pending for ever. BullMQ awaits it to re-make
 * a worker's blocking connection: that worker took no job again (a partition left unserved after a
 * Redis Cluster outage, test/cluster/cluster-outage.test.ts).
 */
describe('a Redis Cluster client connecting while the cluster reports a failure', () => {
  let cluster: RedisCluster;
  let admin: Redis;

  beforeAll(async () => {
    cluster = await startRedisCluster(1);
    admin = new Redis(cluster.nodes[0].url);
  }, 60_000);
  afterAll(async () => {
    admin?.disconnect();
    await cluster?.stop();
  });

  /** Slot 0 unassigned: with full coverage required (the default) the node reports cluster_state:fail. */
  async function setState(state: 'ok' | 'fail'): Promise<void> {
    if (state === 'fail') await admin.cluster('DELSLOTS', 0);
    else {
      await admin.cluster('ADDSLOTS', 0).catch((error: Error) => {
        if (!/already busy/.test(error.message)) throw error;
      });
    }
    await waitFor(async () => (await admin.cluster('INFO')).includes(`cluster_state:${state}`), {
      what: `cluster_state:${state}`,
    });
  }

  /** Disconnects `client`, then connects it while the cluster fails; reads how the attempt settled. */
  async function connectWhileFailing(client: Cluster): Promise<() => string | undefined> {
    await waitFor(() => client.status === 'ready', { what: 'the first connection' });
    client.disconnect();
    await waitFor(() => client.status === 'end', { what: 'the disconnect' });
    await setState('fail');
    let settled: string | undefined;
    client.connect().then(
      () => (settled = 'resolved'),
      (error: Error) => (settled = `rejected: ${error.message}`),
    );
    return () => settled;
  }

  const connections: [string, (opened: Cluster) => Cluster][] = [
    ['one Sundial opens', (opened) => opened],
    // as BullMQ makes its Workers' connections from the one it was given
    [
      'a duplicate of it',
      (opened) => opened.duplicate(undefined, { redisOptions: {} }).on('error', () => undefined),
    ],
  ];

  it.each(connections)(
    'resolves once the cluster is ready again: %s',
    async (_, connection) => {
      const opened = openRedis(cluster.url, { maxRetriesPerRequest: null }) as Cluster;
      const client = connection(opened);
      try {
        const listeners = client.listenerCount('ready') + client.listenerCount('end');
        let reconnects = 0;
        client.on('reconnecting', () => reconnects++);
        const settled = await connectWhileFailing(client);
        // ioredis's ready check refuses the attempt; it reconnects again and again meanwhile, each time
        // through connect(): no listener may be left per attempt (11 made Node warn on stderr).
        await waitFor(() => reconnects >= 3, { timeoutMs: 15_000, what: 'three refused attempts' }); // deadline
        expect(client.listenerCount('ready') + client.listenerCount('end')).toBe(listeners);
        await setState('ok');
        await waitFor(() => client.status === 'ready', { timeoutMs: READY_WITHIN_MS, what: 'ready' });
        await waitFor(settled, { what: 'connect() to settle once the cluster is ready' });
        expect(settled()).toBe('resolved');
        expect(await client.set('k', 'v')).toBe('OK');
      } finally {
        await closeRedis(client);
        await closeRedis(opened);
        await setState('ok');
      }
    },
    30_000,
  );

  it('rejects once the client has ended instead (no reconnect left)', async () => {
    const client = openRedis(cluster.url, { retryStrategy: () => null }) as Cluster;
    try {
      const settled = await connectWhileFailing(client);
      await waitFor(settled, { what: 'connect() to settle once the client ended' });
      expect(settled()).toBe('rejected: Connection is closed.');
      expect(client.status).toBe('end');
    } finally {
      await closeRedis(client);
      await setState('ok');
    }
  }, 30_000);
});
