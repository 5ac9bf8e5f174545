import { closeRedis, openRedis } from '@sundial/redis';
import { type RedisCluster, startRedisCluster, waitFor } from '@sundial/testing/harness';
import { type Cluster, Redis } from 'ioredis';
import { closedWhileStarting, closeEachWhileWaiting } from './close-during-fixture';

/**
 * A Redis Cluster client closed while it is not connected ends (infra/cluster-close.ts). ioredis 6.0.0 left
 * one closed between reconnect attempts `disconnecting` for good, and one whose several node connections
 * were dropped at once went `end` then back to `close`: a start waiting for the cluster (a SIGTERM during
 * a boot, the cluster not ready yet) did not see the close, waited out its 30 s and then blamed Redis.
 */
describe('closing a Redis Cluster client that is not connected', () => {
  let cluster: RedisCluster;
  let admins: Redis[];

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
    admins = cluster.nodes.map((node) => new Redis(node.url));
  }, 60_000);
  afterAll(async () => {
    for (const admin of admins ?? []) admin.disconnect();
    await cluster?.stop();
  });

  /**
   * Slot 0 unassigned (in every node's view: a node keeps what it was told of the others): every node
   * reports cluster_state:fail, as a cluster that has just restarted does for a while.
   */
  async function setState(state: 'ok' | 'fail', owner: Redis): Promise<void> {
    if (state === 'fail') await Promise.all(admins.map((admin) => admin.cluster('DELSLOTS', 0)));
    else await owner.cluster('ADDSLOTS', 0);
    const reported = `cluster_state:${state}`;
    const infos = () => Promise.all(admins.map((admin) => admin.cluster('INFO')));
    await waitFor(async () => (await infos()).every((info) => info.includes(reported)), { what: reported });
  }

  it('a start waiting for the cluster to be ready stops at close: Dispatcher, TimerRunner, RedisTimers.connect()', async () => {
    const owner = admins[cluster.nodes.indexOf(await cluster.nodeOfSlot(0))];
    await setState('fail', owner);
    try {
      expect(await Promise.all(closeEachWhileWaiting(cluster.url))).toEqual([
        closedWhileStarting,
        closedWhileStarting,
        closedWhileStarting,
      ]);
    } finally {
      await setState('ok', owner);
    }
  }, 45_000);

  it('disconnect() of a ready client leaves it ended once all its node connections have ended', async () => {
    const client = openRedis(cluster.url) as Cluster;
    try {
      await client.ping();
      const nodes = client.nodes();
      expect(nodes.length).toBeGreaterThan(1);
      const ended = nodes.map((node) => new Promise((resolve) => node.once('end', resolve)));
      client.disconnect();
      await Promise.all(ended);
      await new Promise(setImmediate); // each node's end drains the pool, and its status event follows
      // each end after the first drained the pool again: the cluster went back to `close`
      expect(client.status).toBe('end');
    } finally {
      await closeRedis(client);
    }
  });
});
