import { RedisTimers, reportWritesLost, SundialMetrics, watchPartitionCount } from '@sundial/redis';
import {
  type RedisCluster,
  type RedisServer,
  startClusterNode,
  startRedisCluster,
  waitFor,
} from '@sundial/testing';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';

const NODE_ARGS = ['--repl-diskless-sync-delay', '0'];

/**
 * On a Redis Cluster each shard's primary is watched on its own (docs/spec.md §4.1): a replica of one
 * shard, cut off and taken over (`CLUSTER FAILOVER TAKEOVER`), lacks the writes its old primary
 * acknowledged; the watch says it once and counts it.
 */
describe('cluster: a Redis Cluster shard failover that lost acknowledged writes is said', () => {
  let cluster: RedisCluster;
  let replica: RedisServer;
  let timers: RedisTimers;
  let stopWatch: (() => Promise<void>) | undefined;

  beforeAll(async () => {
    [cluster, replica] = await Promise.all([startRedisCluster(3, NODE_ARGS), startClusterNode(NODE_ARGS)]);
    const [primary, joining] = [new Redis(cluster.nodes[0].port), new Redis(replica.port)];
    try {
      const id = (await primary.cluster('MYID')) as string;
      await joining.cluster('MEET', '127.0.0.1', cluster.nodes[0].port);
      await waitFor(async () => ((await joining.cluster('NODES')) as string).includes(id), {
        timeoutMs: 10_000, // deadline: the handshake takes a gossip round
        what: 'the new node to know the primary',
      });
      await joining.cluster('REPLICATE', id);
      const offset = (info: string) => /master_repl_offset:(\d+)/.exec(info)?.[1];
      await waitFor(
        async () => {
          const [ours, theirs] = await Promise.all([
            primary.info('replication'),
            joining.info('replication'),
          ]);
          return /master_link_status:up/.test(theirs) && offset(ours) === offset(theirs);
        },
        { timeoutMs: 10_000, what: 'the replica to be in step' }, // deadline
      );
    } finally {
      primary.disconnect();
      joining.disconnect();
    }
    timers = new RedisTimers({ connection: cluster.url, partitions: 3 });
  }, 60_000);

  afterAll(async () => {
    await stopWatch?.();
    await timers?.dispose();
    await Promise.all([cluster?.stop(), replica?.stop()]);
  });

  it("one shard's replica, cut off and taken over: one line, the counter at 1, that shard's timers gone", async () => {
    await timers.schedule({ key: 'before', handler: 'record', every: '1h' });
    const lines: { message: string; fields?: Record<string, unknown> }[] = [];
    const registry = new Registry();
    const logger = {
      error: (message: string, fields?: Record<string, unknown>) => lines.push({ message, fields }),
    };
    stopWatch = watchPartitionCount({
      connection: cluster.url,
      partitions: 3,
      intervalMs: 200,
      told: new Set(),
      onDataLost: ({ message }) => lines.push({ message }),
      onWritesLost: reportWritesLost(logger, new SundialMetrics(registry)),
    });
    const old = new Redis(cluster.nodes[0].port);
    const cut = new Redis(replica.port);
    try {
      await watchLooked(old); // the watch remembers the shard's history
      await replicaAcked(old); // the replica holds it all
      await cut.config('SET', 'masterauth', 'not-the-password');
      await cut.call('CLIENT', 'KILL', 'TYPE', 'master');
      await waitFor(async () => /master_link_status:down/.test(await cut.info('replication')), {
        timeoutMs: 5_000, // deadline
        what: "the replica's link to be down",
      });
      const keys = Array.from({ length: 12 }, (_, n) => `lost:${n}`);
      for (const key of keys) await timers.schedule({ key, handler: 'record', every: '1h' });
      await waitForWatchInfo(old); // a look saw them on the old primary
      await cut.cluster('FAILOVER', 'TAKEOVER');

      const [line] = await waitFor(() => (lines.length > 0 ? lines : undefined), {
        timeoutMs: 15_000, // deadline: the watch finds the new primary at its slots' refresh
        what: 'the writes-lost line',
      });
      expect(line.message).toMatch(/^Redis lost writes acknowledged to Sundial under prefix 'sundial': /);
      expect(line.fields).toMatchObject({ primary: `127.0.0.1:${cluster.nodes[0].port}` });
      const lostTotal = await registry.getSingleMetric('sundial_redis_writes_lost_total')?.get();
      expect(lostTotal?.values[0]?.value).toBe(1);
      const found = await Promise.all(keys.map((key) => timers.get(key)));
      expect(found.filter((timer) => timer === null).length).toBeGreaterThan(0); // that shard's are gone
      expect(found.filter((timer) => timer !== null).length).toBeGreaterThan(0); // the others' are not
      expect(lines).toHaveLength(1);
    } finally {
      old.disconnect();
      cut.disconnect();
    }
  }, 30_000);
});

/** Until the watch's connection to the node has looked (its replication, then its markers: `GET` last). */
async function watchLooked(redis: Redis): Promise<void> {
  await waitFor(async () => /name=sundial-watch .*cmd=get/.test((await redis.client('LIST')) as string), {
    timeoutMs: 10_000, // deadline: the watch looks at connect, then every 200 ms
    what: 'the watch to look',
  });
}

/** Until the primary's replica acknowledged its whole stream (a replica acknowledges every second). */
async function replicaAcked(redis: Redis): Promise<void> {
  await waitFor(
    async () => {
      const info = await redis.info('replication');
      return /slave0:.*,offset=(\d+),/.exec(info)?.[1] === /master_repl_offset:(\d+)/.exec(info)?.[1];
    },
    { timeoutMs: 10_000, what: "the replica's acknowledgement" }, // deadline: acks come every second
  );
}

/**
 * Until another client (the watch's look: once the client and the watch are connected nothing else here
 * sends INFO) read the node's INFO from now, `cmdstat_info` counting each one but the one answering, so
 * each poll of ours adds one.
 */
async function waitForWatchInfo(redis: Redis): Promise<void> {
  const calls = async () =>
    Number(/cmdstat_info:calls=(\d+)/.exec(await redis.info('commandstats'))?.[1] ?? 0);
  const before = await calls();
  let polls = 0;
  await waitFor(async () => (await calls()) - before - ++polls >= 1, {
    timeoutMs: 10_000, // deadline: the watch looks every 200 ms
    what: "the watch to read the node's replication",
  });
}
