import { silentLogger, type SundialLogger } from '@sundial/core';
import { Dispatcher, type FireJobData, fireConsumerOptions, RedisTimers, TimerRunner } from '@sundial/redis';
import { Worker } from 'bullmq';
import { Cluster, Redis } from 'ioredis';
import {
  type RedisCluster,
  type RedisServer,
  ReplyDropper,
  startRedisCluster,
  waitFor,
} from '@sundial/testing/harness';
import { recorder } from '../redis/fire-fixture';

/** A lease long enough that BullMQ's stalled check (twice it, then up to once more) cannot be what helps. */
const LEASE_MS = 20_000;

/** BullMQ's `moveToActive` (a take): EVALSHA or EVAL of 11 keys, the queue's `wait` and `active` first. */
const isTake = (sent: string[]) =>
  (sent[0] === 'EVALSHA' || sent[0] === 'EVAL') &&
  sent[2] === '11' &&
  String(sent[3]).endsWith(':wait') &&
  String(sent[4]).endsWith(':active');

/**
 * docs/design.md "A take the client lost" on a Redis Cluster: a shard's connection that drops is not
 * reconnected but ended and made anew by ioredis (its `-node`), which sends the unanswered take again
 * on the new one after `retryDelayOnFailover`; the Cluster client itself reports no close. The job the
 * first take moved to `active` is put back to wait all the same, so its timer runs within seconds, once.
 */
describe('cluster: a fire job whose take lost its reply on a shard connection', () => {
  let cluster: RedisCluster;
  let shard: RedisServer;
  let proxy: ReplyDropper;
  const closers: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    // three shards: with one, its connection's end is the whole client's close and reconnect
    cluster = await startRedisCluster(3);
    const any = new Redis(cluster.nodes[0].port);
    const slot = Number(await any.cluster('KEYSLOT', '{p0.0}'));
    any.disconnect();
    shard = await cluster.nodeOfSlot(slot);
    proxy = await ReplyDropper.start({ port: shard.port });
  }, 60_000);
  afterAll(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await proxy?.stop();
    await cluster?.stop();
  });

  it("runs its timer once, within seconds of the shard's new connection", async () => {
    const prefix = 'lost-take';
    const shared = { connection: cluster.url, prefix };
    const timers = new RedisTimers({ ...shared, logger: silentLogger });
    closers.push(() => timers.dispose());
    const dispatcher = new Dispatcher({ ...shared, logger: silentLogger });
    closers.push(() => dispatcher.close());
    await dispatcher.start();
    const timer = await timers.schedule({ key: 'k', handler: 'job', delay: 0, removeOnComplete: false });
    const raw = new Redis(shard.port);
    closers.push(() => raw.quit());
    const job = recorder();
    const lines: string[] = [];
    const logger: SundialLogger = { ...silentLogger, warn: (message) => void lines.push(message) };
    const runner = new TimerRunner({
      ...shared,
      handlers: { job: job.handler },
      leaseMs: LEASE_MS,
      consumers: 'external',
      logger,
    });
    closers.push(() => runner.close(0));
    // on a Cluster the partition's tag names its slot too (`{p0.0}`)
    const queue = `${prefix}:${runner.keys.queueName(0)}`;
    await waitFor(async () => (await raw.llen(`${queue}:wait`)) === 1, { what: 'the fire job' });
    // The host's BullMQ Worker reaches the partition's shard through the proxy, the others directly.
    const connection = new Cluster([{ host: '127.0.0.1', port: proxy.port }], {
      natMap: { [`127.0.0.1:${shard.port}`]: { host: '127.0.0.1', port: proxy.port } },
      redisOptions: { maxRetriesPerRequest: null },
    });
    connection.on('error', () => undefined);
    closers.push(() => connection.quit().catch(() => undefined));
    const worker = new Worker<FireJobData, unknown>(
      runner.keys.queueName(0),
      (bullJob) => runner.processFireJob(0, bullJob.data),
      { connection, ...fireConsumerOptions({ prefix, leaseMs: LEASE_MS }), autorun: false },
    );
    worker.on('error', () => undefined); // the dropped connection, told by BullMQ as it retries
    closers.push(() => worker.close());
    runner.attachConsumer(worker);

    proxy.dropReplyTo({ matches: isTake });
    const started = Date.now();
    await runner.start();
    await waitFor(() => job.calls.length > 0, { timeoutMs: 8_000, what: 'the run' }); // deadline: a lock is 40 s
    expect(Date.now() - started).toBeLessThan(LEASE_MS);
    expect(proxy.dropped).toBe(1);
    expect(job.calls.map((ctx) => [ctx.key, ctx.version])).toEqual([['k', timer.version]]);
    const settled = await waitFor(async () => {
      const row = await timers.get('k');
      return row?.status === 'completed' && row;
    });
    expect(settled).toMatchObject({ runCount: 1 });
    await waitFor(async () => (await raw.llen(`${queue}:active`)) === 0, { what: 'the job finished' });
    expect(await raw.llen(`${queue}:wait`)).toBe(0);
    expect(job.calls).toHaveLength(1);
    expect(lines.filter((line) => line.includes('put back to wait'))).toHaveLength(1);
  });
});
