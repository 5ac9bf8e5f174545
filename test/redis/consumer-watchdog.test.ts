import { silentLogger } from '@sundial/core';
import { fireConsumerOptions, type FireJobData, TimerRunner } from '@sundial/redis';
import {
  CommandGate,
  ensureBuilt,
  faketimeEnv,
  hasFaketime,
  killAll,
  spawnApp,
  waitFor,
} from '@sundial/testing/harness';
import { Worker } from 'bullmq';
import { type FireCluster, recorder, useFirePath } from './fire-fixture';

const fire = useFirePath();

/**
 * Ends the blocking reads of `prefix`'s BullMQ Workers (their connections are named after the prefix), as
 * their timeout would; true once none is left. A paused Worker's read still under way takes the next job.
 */
async function readsEnded(prefix: string): Promise<boolean> {
  const clients = String(await fire.raw.call('CLIENT', 'LIST')).split('\n');
  const blocked = clients.filter((line) => line.includes(` name=${prefix}:`) && /flags=\w*b/.test(line));
  for (const line of blocked) await fire.raw.call('CLIENT', 'UNBLOCK', /^id=(\d+)/.exec(line)![1]);
  return blocked.length === 0;
}

/** The runner's consumers (fire/fire-consumer.ts) as far as the test reads them. */
interface HeldConsumers {
  consumers: Map<number, unknown>;
  retired: ReadonlySet<unknown>;
  connections: readonly unknown[];
}
/** Short, so the tests need not wait the default 30 s. */
const STALL_MS = 1_500;

/**
 * Issue 12 §3: BullMQ workers are known to stop consuming after some failovers. The runner's watchdog
 * closes a partition's consumer that took no job while a job waited longer than `consumerStallMs`,
 * makes a Worker of its own in its place, counts it and logs it.
 */
/**
 * A runner whose one consumer (the host's, as @nestjs/bullmq makes it) stops taking jobs: paused behind
 * the runner's back, a real BullMQ state in which a Worker takes nothing, as a stuck one does.
 */
async function stuckConsumer(cluster: FireCluster, connection = fire.url()) {
  const job = recorder();
  const recreated: number[] = [];
  const errors: string[] = [];
  const shared = { connection: fire.url(), prefix: cluster.prefix };
  const runner = new TimerRunner({
    ...shared,
    connection,
    handlers: { job: job.handler },
    consumers: 'external',
    consumerStallMs: STALL_MS,
    observer: { consumerRecreated: ({ partition }) => recreated.push(partition) },
    logger: { ...silentLogger, error: (message) => errors.push(message) },
  });
  const hosts = new Worker<FireJobData>(
    cluster.timers.keys.queueName(0),
    (bullJob) => runner.processFireJob(0, bullJob.data),
    {
      connection: { host: '127.0.0.1', port: Number(new URL(fire.url()).port) },
      ...fireConsumerOptions(shared),
      autorun: false,
    },
  );
  runner.attachConsumer(hosts);
  await runner.start();
  await hosts.pause(true);
  return { job, recreated, errors, hosts, runner };
}

describe('fire-job consumer watchdog', () => {
  it('replaces a consumer that stopped taking jobs, and the waiting job runs', async () => {
    const cluster = await fire.cluster();
    await cluster.dispatcher();
    const { job, recreated, errors, hosts, runner } = await stuckConsumer(cluster);
    try {
      await cluster.timers.schedule({ key: 'k', handler: 'job', delay: 0 });
      await waitFor(() => job.calls.length === 1, { timeoutMs: 4 * STALL_MS + 5_000, what: 'the run' }); // deadline
      expect(recreated).toEqual([0]);
      expect(errors).toContainEqual(expect.stringMatching(/took no job .* closed and made anew/));
      expect(hosts.closing).toBeTruthy(); // the stuck consumer was closed
    } finally {
      await runner.close(0);
    }
  }, 30_000);

  // docs/spec.md §4.4: the job's age was the dispatcher host's Date.now() against the worker's; with the
  // scheduler's clock an hour ahead each job looked an hour younger, and the stuck consumer stayed.
  (hasFaketime() ? it : it.skip)(
    'replaces a stuck consumer whose jobs came from a dispatcher an hour ahead',
    async () => {
      const cluster = await fire.cluster();
      await ensureBuilt();
      const env = { REDIS_URL: fire.url(), SUNDIAL_PREFIX: cluster.prefix, ...faketimeEnv('+1h') };
      const scheduler = await spawnApp('scheduler', 'scheduler an hour ahead', env);
      const { job, recreated, runner } = await stuckConsumer(cluster);
      try {
        await cluster.timers.schedule({ key: 'k', handler: 'job', delay: 0 });
        // deadline: left as soon as the job ran on the consumer made anew
        await waitFor(() => job.calls.length === 1, { timeoutMs: 4 * STALL_MS + 5_000, what: 'the run' }); // deadline
        expect(recreated).toEqual([0]);
      } finally {
        await runner.close(0);
        await killAll([scheduler]);
      }
    },
    150_000,
  );

  // A check under way when the runner closes (its reads answered after the close began) made a consumer
  // that nothing closed: a BullMQ Worker taking jobs, its connections open, after the runner's close.
  it('makes no consumer once the runner closes, for a check under way', async () => {
    const cluster = await fire.cluster();
    await cluster.dispatcher();
    // the runner's connections go through the gate, which holds the watchdog's read of the wait list
    const gate = await CommandGate.start({ port: Number(new URL(fire.url()).port) }, /LINDEX/i);
    gate.release();
    const { recreated, runner } = await stuckConsumer(cluster, gate.url);
    try {
      await cluster.timers.schedule({ key: 'k', handler: 'job', delay: 0 });
      const waitList = `${cluster.timers.keys.bullPrefix}:${cluster.timers.keys.queueName(0)}:wait`;
      await waitFor(async () => (await fire.raw.llen(waitList)) === 1, { what: 'the job to wait' });
      const waitingSince = Date.now();
      await gate.holdNext();
      // deadline: the job waited longer than STALL_MS by the time the held check reads its age
      await waitFor(() => Date.now() - waitingSince > STALL_MS, {
        timeoutMs: 2 * STALL_MS,
        what: 'STALL_MS',
      });
      const closing = runner.close(0);
      gate.release();
      await closing;
      expect(recreated).toEqual([]);
    } finally {
      await runner.close(0);
      await gate.stop();
    }
  }, 30_000);

  // Each replacement kept the replaced consumer in the runner's lists and its connection open until the
  // runner closed: after weeks of failovers, one more Redis connection (reconnecting through every
  // outage) per replacement. Once a replaced consumer's close settles, it and its connection go.
  it('closes a replaced consumer and its connection: the connections stay flat across replacements', async () => {
    const cluster = await fire.cluster();
    await cluster.dispatcher();
    const job = recorder();
    const recreated: number[] = [];
    const runner = await cluster.runner(
      { job: job.handler },
      {
        consumerStallMs: STALL_MS,
        observer: { consumerRecreated: ({ partition }) => recreated.push(partition) },
      },
    );
    const held = (runner as unknown as { consumers: HeldConsumers }).consumers;
    const clients = async () =>
      String(await fire.raw.call('CLIENT', 'LIST'))
        .trim()
        .split('\n').length;
    await cluster.timers.schedule({ key: 'k0', handler: 'job', delay: 0 }); // every connection open
    await waitFor(() => job.calls.length === 1, { what: 'the first run' }); // deadline
    const before = await clients();
    for (let replaced = 1; replaced <= 3; replaced++) {
      await (held.consumers.get(0) as Worker).pause(true); // stuck, as after a failover
      // deadline: the paused consumer's blocking read ended
      await waitFor(() => readsEnded(cluster.prefix), { what: "the paused consumer's read ended" });
      await cluster.timers.schedule({ key: `k${replaced}`, handler: 'job', delay: 0 });
      // deadline: the run on the consumer made anew
      await waitFor(() => job.calls.length === replaced + 1, {
        timeoutMs: 4 * STALL_MS + 5_000,
        what: 'the run',
      });
      // deadline: the replaced consumer's close settled and its connection closed
      await waitFor(async () => (await clients()) <= before, { what: 'the connections back to their count' });
    }
    expect(recreated).toEqual([0, 0, 0]);
    expect(held.retired.size).toBe(0);
    expect(held.connections).toHaveLength(1);
  }, 40_000);

  it('a worker whose connections were killed (CLIENT KILL) takes jobs again', async () => {
    const cluster = await fire.cluster();
    await cluster.dispatcher();
    const job = recorder();
    await cluster.runner({ job: job.handler }, { consumerStallMs: STALL_MS });
    await cluster.timers.schedule({ key: 'before', handler: 'job', delay: 0 });
    await waitFor(() => job.calls.length === 1, { what: 'the first run' });

    // Every connection but the fixture's own: the runner's blocking and main BullMQ connections among them.
    await fire.raw.call('CLIENT', 'KILL', 'TYPE', 'normal', 'SKIPME', 'yes');
    await cluster.timers.schedule({ key: 'after', handler: 'job', delay: 0 });
    await waitFor(() => job.calls.length === 2, {
      timeoutMs: 4 * STALL_MS + 10_000,
      what: 'the run after the kill',
    });
    expect(job.calls.map((ctx) => ctx.key)).toEqual(['before', 'after']);
  }, 40_000);
});
