import {
  type AppProcess,
  clusterEnv,
  ensureBuilt,
  killAll,
  type RedisCluster,
  type RedisServer,
  readRuns,
  spawnCluster,
  startClusterReplica,
  startRedis,
  startRedisCluster,
  waitFor,
} from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { documentedAcl, documentedClusterAcl } from '../documented-acl';
import { refusals, runEveryKindOfTimer } from './acl-fixture';

const PASSWORD = 'acl-failover-secret';
const NODE_ARGS = ['--repl-diskless-sync-delay', '0'];

/**
 * The least-privilege user of docs/operations.md through a Redis Cluster shard failover: the replica of
 * one shard has the user too (as the document says every node must), the shard fails over to it
 * (`CLUSTER FAILOVER`, the graceful one an operator or a managed Redis runs), and the apps, on the new
 * topology under that user, run the timers due across the failover and then every kind of timer and
 * operation; no node refuses any command (ACL LOG stays empty: the slot refresh after the `MOVED`, the
 * new primary's watches and scripts included). acl-topologies.test.ts runs the Cluster without a failover.
 */
describe('the documented ACL user through a Redis Cluster shard failover', () => {
  let cluster: RedisCluster;
  let replica: RedisServer;
  let sink: RedisServer;
  let admins: [string, Redis][] = [];
  let apps: AppProcess[] = [];

  beforeAll(async () => {
    [cluster, sink] = await Promise.all([startRedisCluster(3, NODE_ARGS), startRedis(), ensureBuilt()]);
    replica = await startClusterReplica(cluster.nodes[0], NODE_ARGS);
    const nodes = [...cluster.nodes, replica];
    admins = nodes.map((node, n) => [n === 3 ? 'replica of node 0' : `node ${n}`, new Redis(node.url)]);
    for (const [, admin] of admins) {
      await admin.call('ACL', 'SETUSER', ...documentedAcl(PASSWORD));
      await admin.call('ACL', 'SETUSER', ...documentedClusterAcl());
    }
    // 3 partitions: one on each primary, so the shard that fails over serves one of them
    const hosts = cluster.nodes.map((node) => `127.0.0.1:${node.port}`).join(',');
    const env = clusterEnv(`redis+cluster://sundial:${PASSWORD}@${hosts}`, {
      SUNDIAL_TEST_RECORD_URL: sink.url,
      SUNDIAL_PARTITIONS: '3',
    });
    const started = await spawnCluster(env, 1, 1);
    apps = [...started.schedulers, ...started.workers];
  }, 180_000); // deadline: a Cluster's join, a replica's sync and two apps' boot on a loaded host

  afterAll(async () => {
    for (const [, admin] of admins) admin.disconnect();
    await killAll(apps);
    await Promise.all([cluster?.stop(), replica?.stop(), sink?.stop()]);
  });

  it('runs what was due across the failover, then every kind of timer, and no node refuses a command', async () => {
    const api = apps[0].api;
    const keys = Array.from({ length: 30 }, (_, n) => `across:${n}`);
    for (const [n, key] of keys.entries()) {
      const reply = await api('POST', '/v1/timers', { key, handler: 'record', delay: 500 + n * 100 });
      expect(reply.status).toBe(201);
    }
    const promoted = new Redis(replica.port);
    try {
      await promoted.cluster('FAILOVER');
      // deadline: a graceful failover waits for the replica to catch up, then takes a gossip round
      await waitFor(async () => /role:master/.test(await promoted.info('replication')), {
        timeoutMs: 15_000,
        what: 'the replica to be the primary of its shard',
      });
    } finally {
      promoted.disconnect();
    }
    const records = new Redis(sink.url);
    try {
      // deadline: the last of them is due 3.4 s after it was sent
      await waitFor(
        async () => {
          const ran = new Set((await readRuns(records)).map((run) => run.key));
          return keys.every((key) => ran.has(key));
        },
        { timeoutMs: 20_000, intervalMs: 100, what: 'every timer due across the failover to run' },
      );
    } finally {
      records.disconnect();
    }
    await runEveryKindOfTimer(apps, sink.url);
    expect(await refusals(admins)).toEqual([]);
  }, 90_000);
});
