import { keySlot } from '@sundial/redis';
import { type RedisCluster, type RedisServer, startRedis, startRedisCluster } from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { describeExactlyOnce } from './exactly-once';

const PARTITIONS = 8;
let cluster: RedisCluster;

/**
 * The exactly-once suite on a real 3-primary Redis Cluster with 8 partitions: every partition's keys
 * and fire queue in one slot, and the partitions spread over all three primaries.
 */
describeExactlyOnce({
  name: 'a 3-primary Redis Cluster',
  partitions: PARTITIONS,
  async start() {
    // A Cluster has database 0 only: runs are recorded in a Redis of their own.
    const [started, records] = await Promise.all([startRedisCluster(3), startRedis()]);
    cluster = started;
    return {
      url: cluster.url,
      recordUrl: records.url,
      stop: async () => void (await Promise.all([cluster.stop(), records.stop()])),
    };
  },
  async afterScheduled(client) {
    const owners = new Map<RedisServer, number[]>();
    for (const partition of client.keys.all()) {
      const slot = keySlot(client.keys.tag(partition).slice(1, -1));
      const owner = await cluster.nodeOfSlot(slot);
      owners.set(owner, [...(owners.get(owner) ?? []), partition]);
      // The partition's rows and indexes are all in its slot, on the node that serves it.
      const direct = new Redis(owner.url);
      try {
        expect(await direct.cluster('COUNTKEYSINSLOT', slot)).toBeGreaterThan(4);
        expect(await direct.exists(client.keys.due(partition))).toBe(1);
      } finally {
        direct.disconnect();
      }
    }
    expect(owners.size).toBe(3);
    for (const node of cluster.nodes) {
      const direct = new Redis(node.url);
      try {
        expect(await direct.dbsize()).toBeGreaterThan(100);
      } finally {
        direct.disconnect();
      }
    }
  },
});
