import { RedisTimers, reportWritesLost, SundialMetrics, watchPartitionCount } from '@sundial/redis';
import { Queue, Worker } from 'bullmq';
import {
  type RedisCluster,
  type RedisServer,
  replicaInStep,
  startClusterReplica,
  startRedisCluster,
  waitFor,
} from '@sundial/testing/harness';
import { Cluster, Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { FinishedJobs } from '../../libs/redis/src/fire/finished-jobs';

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
    cluster = await startRedisCluster(3, NODE_ARGS);
    replica = await startClusterReplica(cluster.nodes[0], NODE_ARGS);
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
    stopWatch = await watchPartitionCount({
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

  // docs/spec.md §4.7: a fire job whose finish the old primary took and never passed on is finished again
  // once the runner's Cluster connection finds the shard's new primary (a slots' refresh: the client emits
  // no close for one shard), not left active until its lock expires and a stalled check hands it on —
  // even when that connection sends nothing to the shard (the consumer has its own, as a runner's have):
  // no MOVED then, its own periodic refresh finds the promotion.
  // Runs after the case above, on its cluster: `replica` is now the shard's primary, nodes[0] its replica.
  it('is finished again on the promoted replica, long before its lock expires', async () => {
    const [primary, cut] = [new Redis(replica.port), new Redis(cluster.nodes[0].port)];
    const startup = [{ host: '127.0.0.1', port: cluster.nodes[1].port }];
    const connection = new Cluster(startup, { redisOptions: { maxRetriesPerRequest: null } });
    const runner = new Cluster(startup);
    const prefix = `{${await tagOn(primary, replica.port)}}`;
    const queue = new Queue('fire', { connection, prefix });
    let release = () => undefined as void;
    const processing = new Promise<void>((resolve) => (release = resolve));
    let started = false;
    const worker = new Worker(
      'fire',
      async () => {
        started = true;
        await processing;
      },
      { connection, prefix, lockDuration: 30_000 }, // 30 s: the stalled check would come after the deadline
    );
    let again = 0;
    const finishes = new FinishedJobs({
      redis: runner,
      onFinishedAgain: (jobs) => (again += jobs),
      logError: (message) => {
        throw new Error(message);
      },
    });
    worker.on('completed', (job) => finishes.finished(job));
    worker.on('error', () => undefined); // the old primary's demotion unblocks the worker's BZPOPMIN
    // for the failure's message: when the runner's refreshes saw which primaries
    let finishedAt = 0;
    const refreshes: [number, string][] = [];
    runner.on('refresh', () => {
      const seen = runner.nodes('master').map(({ options }) => options.port ?? 0);
      refreshes.push([Date.now(), seen.sort((a, b) => a - b).join(',')]);
    });
    try {
      await replicaInStep(primary, cut);
      // the clients' view of the shards as they are now (the first case's takeover known to every node)
      await new Promise((resolve) => connection.refreshSlotsCache(resolve));
      await new Promise((resolve) => runner.refreshSlotsCache(resolve));
      const job = await queue.add('run', {});
      await waitFor(() => started || undefined, { what: 'the job to be taken' });
      await replicaAcked(primary); // the replica holds the job active, with its lock
      await cut.config('SET', 'masterauth', 'not-the-password');
      await cut.call('CLIENT', 'KILL', 'TYPE', 'master');
      await waitFor(async () => /master_link_status:down/.test(await cut.info('replication')), {
        timeoutMs: 5_000, // deadline
        what: "the replica's link to be down",
      });
      const completed = new Promise((resolve) => worker.once('completed', resolve));
      release();
      await completed; // acknowledged by the old primary only
      finishedAt = Date.now();
      await cut.cluster('FAILOVER', 'TAKEOVER');
      await waitFor(async () => (await cut.info('replication')).includes('role:master') || undefined, {
        timeoutMs: 5_000, // deadline
        what: 'the takeover',
      });
      // The runner's connection sends nothing there: its own refresh finds the promotion. Read on the new
      // primary itself: through the Cluster client a read may still reach the old one, which answers
      // 'completed' for its own copy until it hears of the takeover (seen on a loaded host, 0.3 s after).
      const completedThere = `${job.queueQualifiedName}:completed`;
      await waitFor(async () => again > 0 && (await cut.zscore(completedThere, job.id!)) !== null, {
        timeoutMs: 10_000, // deadline: well before the 30 s lock and the stalled check after it
        what: 'the job finished again on the new primary',
      }).catch(async (error: Error) => {
        const lock = await cut.get(`${job.queueQualifiedName}:${job.id}:lock`).catch((e: Error) => e.message);
        const state = await queue.getJobState(job.id!).catch((e: Error) => e.message);
        const active = await cut.lrange(`${job.queueQualifiedName}:active`, 0, -1);
        throw new Error(
          `${error.message}: finished again ${again}, state ${state}, on the new primary its lock ${lock} ` +
            `and active ${JSON.stringify(active)}, ` +
            `${Date.now() - finishedAt} ms after the finish; the runner's refreshes (ms after the finish: ` +
            `primaries): ${refreshes
              .filter(([at]) => at >= finishedAt)
              .map(([at, seen]) => `${at - finishedAt}: ${seen}`)
              .join('; ')}`,
        );
      });
      expect(again).toBe(1);
    } finally {
      finishes.stop();
      await worker.close(true);
      await queue.close();
      connection.disconnect();
      runner.disconnect();
      primary.disconnect();
      cut.disconnect();
    }
  }, 30_000);
});

/** Until `replica` follows `primary` with all of its stream. */

/** A hash tag whose slot the node on `port` serves. */
async function tagOn(redis: Redis, port: number): Promise<string> {
  const ranges = ((await redis.cluster('SLOTS')) as unknown as [number, number, [string, number]][]).filter(
    ([, , [, owner]]) => owner === port,
  );
  for (let n = 0; ; n++) {
    const slot = (await redis.cluster('KEYSLOT', `fj${n}`)) as number;
    if (ranges.some(([from, to]) => slot >= from && slot <= to)) return `fj${n}`;
  }
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
