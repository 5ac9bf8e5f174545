import {
  type AppProcess,
  clusterEnv,
  ensureBuilt,
  keyPath,
  killAll,
  type RedisCluster,
  type RedisSentinels,
  type RedisServer,
  readRuns,
  spawnCluster,
  startRedis,
  startRedisCluster,
  startRedisSentinels,
  waitFor,
} from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { documentedAcl, documentedClusterAcl, documentedSentinelAcl } from '../documented-acl';
import { refusals, runEveryKindOfTimer } from './acl-fixture';

const PASSWORD = 'acl-test-secret';
const SENTINEL_PASSWORD = 'acl-sentinel-secret';
const hosts = (servers: RedisServer[]) => servers.map((server) => `127.0.0.1:${server.port}`).join(',');

/** Admin connections (the `default` user) to `servers`, each with its name for a refusal's report. */
const adminsOf = (named: [string, RedisServer][]): [string, Redis][] =>
  named.map(([name, server]) => [name, new Redis(server.url)]);

/** Ends a suite: its admin connections, its apps, then its servers (those that started). */
async function stopAll(
  admins: [string, Redis][],
  apps: AppProcess[],
  servers: ({ stop(): Promise<void> } | undefined)[],
): Promise<void> {
  for (const [, admin] of admins) admin.disconnect();
  await killAll(apps);
  await Promise.all(servers.map((server) => server?.stop()));
}

/**
 * The least-privilege user of docs/operations.md on the topologies where ioredis sends more than it does
 * to one node, each with exactly what the document adds there (read from it): a scheduler and a worker
 * run every kind of timer under it, and no server refuses any of their commands (ACL LOG stays empty).
 * acl.test.ts runs the same on one node.
 */
describe('the documented ACL user on a Redis Cluster', () => {
  let cluster: RedisCluster;
  let sink: RedisServer;
  let admins: [string, Redis][] = [];
  let apps: AppProcess[] = [];

  beforeAll(async () => {
    [cluster, sink] = await Promise.all([startRedisCluster(3), startRedis(), ensureBuilt()]);
    admins = adminsOf(cluster.nodes.map((node, n) => [`node ${n}`, node]));
    for (const [, admin] of admins) {
      await admin.call('ACL', 'SETUSER', ...documentedAcl(PASSWORD));
      await admin.call('ACL', 'SETUSER', ...documentedClusterAcl());
    }
    // 3 partitions: one on each primary, so each node serves the fire path and the client's writes
    const env = clusterEnv(`redis+cluster://sundial:${PASSWORD}@${hosts(cluster.nodes)}`, {
      SUNDIAL_TEST_RECORD_URL: sink.url,
      SUNDIAL_PARTITIONS: '3',
    });
    const started = await spawnCluster(env, 1, 1);
    apps = [...started.schedulers, ...started.workers];
  }, 180_000); // deadline: a Cluster's join and two apps' boot on a loaded host

  afterAll(() => stopAll(admins, apps, [cluster, sink]));

  it('runs every kind of timer and every operation, and no node refuses any command', async () => {
    await runEveryKindOfTimer(apps, sink.url);
    expect(await refusals(admins)).toEqual([]);
  }, 60_000);
});

/**
 * Through Sentinels that require their own user (the document's, given in the URL's query): the apps
 * run under it and the data nodes' user, and go on after a failover to the replica (which has the
 * user too, as the document says); no data node and no Sentinel refuses a command, the failover
 * announcement's subscription included (refused, the apps would run all the same).
 */
describe('the documented ACL users through Sentinel', () => {
  let group: RedisSentinels;
  let sink: RedisServer;
  let admins: [string, Redis][] = [];
  let apps: AppProcess[] = [];

  beforeAll(async () => {
    [group, sink] = await Promise.all([startRedisSentinels(), startRedis(), ensureBuilt()]);
    const dataNodes = adminsOf([
      ['primary', group.primary],
      ['replica', group.replica],
    ]);
    const sentinels = adminsOf(group.sentinels.map((sentinel, n) => [`sentinel ${n}`, sentinel]));
    admins = [...dataNodes, ...sentinels];
    for (const [, admin] of dataNodes) await admin.call('ACL', 'SETUSER', ...documentedAcl(PASSWORD));
    for (const [, admin] of sentinels)
      await admin.call('ACL', 'SETUSER', ...documentedSentinelAcl(SENTINEL_PASSWORD));
    const query = `sentinelUsername=sundial-sentinel&sentinelPassword=${SENTINEL_PASSWORD}`;
    const url = `redis+sentinel://sundial:${PASSWORD}@${hosts(group.sentinels)}/${group.name}?${query}`;
    const started = await spawnCluster(clusterEnv(url, { SUNDIAL_TEST_RECORD_URL: sink.url }), 1, 1);
    apps = [...started.schedulers, ...started.workers];
  }, 180_000); // deadline: the Sentinels knowing each other and two apps' boot on a loaded host

  afterAll(() => stopAll(admins, apps, [group, sink]));

  it('runs every kind of timer, goes on after a failover, and nothing refuses any command', async () => {
    await runEveryKindOfTimer(apps, sink.url);
    const records = new Redis(sink.url);
    try {
      const admin = (name: string) => admins.find(([named]) => named === name)![1];
      expect(await admin('sentinel 0').call('SENTINEL', 'FAILOVER', group.name)).toBe('OK');
      // the old primary demoted: from now on a write the apps make reaches the new one, or fails
      await waitFor(async () => (await admin('primary').info('replication')).includes('role:slave'), {
        timeoutMs: 20_000, // deadline: Sentinel's promotion and the old primary's reconfiguration
        what: 'the old primary to be a replica',
      });
      await waitFor(
        async () =>
          (await apps[0].api('PUT', keyPath('acl:after'), { handler: 'record', delay: 0 })).status < 300,
        { timeoutMs: 20_000, what: 'a write on the new primary' }, // deadline: the apps following it
      );
      await waitFor(async () => (await readRuns(records)).some((run) => run.key === 'acl:after'), {
        timeoutMs: 20_000, // deadline: the worker following it, then the run
        what: 'the run after the failover',
      });
    } finally {
      records.disconnect();
    }
    for (const app of apps) {
      await waitFor(async () => (await app.api('GET', '/health/ready')).status === 200, {
        timeoutMs: 20_000, // deadline: the readiness connection following the new primary
        what: `${app.name} ready on the new primary`,
      });
    }
    expect(await refusals(admins)).toEqual([]);
  }, 90_000);
});
