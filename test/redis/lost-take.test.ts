import { silentLogger, type SundialLogger } from '@sundial/core';
import { Dispatcher, type FireJobData, fireConsumerOptions, RedisTimers, TimerRunner } from '@sundial/redis';
import { Worker } from 'bullmq';
import Redis from 'ioredis';
import { type RedisServer, ReplyDropper, startRedis, waitFor } from '@sundial/testing/harness';
import { recorder } from './fire-fixture';

/** A lease long enough that BullMQ's stalled check (twice it, then up to once more) cannot be what helps. */
const LEASE_MS = 20_000;

/**
 * A BullMQ script call on a queue (EVALSHA or EVAL, then its script and key count) whose first keys are the
 * queue's `wait` and `active`: `moveToActive` has 11 keys (a take), `moveToFinished` 14 (a finish).
 */
function bullCall(keys: number): (sent: string[]) => boolean {
  return (sent) =>
    (sent[0] === 'EVALSHA' || sent[0] === 'EVAL') &&
    sent[2] === String(keys) &&
    String(sent[3]).endsWith(':wait') &&
    String(sent[4]).endsWith(':active');
}
const isTake = bullCall(11);
const isFinish = bullCall(14);

/**
 * docs/design.md "A take the client lost" (the fire path, 4.): Redis moved a fire job to `active` for a
 * consumer whose connection dropped before the reply came. The consumer never learns of it; BullMQ alone
 * hands it on only after the lock (2 × lease) and a stalled check. The runner puts it back to wait once
 * the connection is back, so its timer runs within seconds, once.
 */
describe('a fire job whose take lost its reply', () => {
  let server: RedisServer;
  let proxy: ReplyDropper;
  let prefixes = 0;
  const closers: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    server = await startRedis();
    proxy = await ReplyDropper.start({ port: server.port });
  });
  beforeEach(() => proxy.reset());
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });
  afterAll(async () => {
    await proxy?.stop();
    await server?.stop();
  });

  /** A timer handed off before any consumer exists, and a runner behind the proxy that runs it. */
  async function handedOff(consumers: 'own' | 'external') {
    const prefix = `t${++prefixes}`;
    const shared = { connection: server.url, prefix };
    const timers = new RedisTimers({ ...shared, logger: silentLogger });
    closers.push(() => timers.dispose());
    const dispatcher = new Dispatcher({ ...shared, logger: silentLogger });
    closers.push(() => dispatcher.close());
    await dispatcher.start();
    // the job waits in the queue before any consumer exists: the consumer's first take is the one that takes it
    const timer = await timers.schedule({ key: 'k', handler: 'job', delay: 0, removeOnComplete: false });
    const raw = new Redis(server.url);
    closers.push(() => raw.quit());
    // the fire job itself, not only its `armed` entry (take-due answers before the dispatcher adds the job)
    await waitFor(async () => (await raw.llen(`${prefix}:sundial-fire-{p0}:wait`)) === 1, {
      what: 'the fire job',
    });
    const job = recorder();
    const lines: { level: string; message: string }[] = [];
    const logger: SundialLogger = {
      ...silentLogger,
      warn: (message) => void lines.push({ level: 'warn', message }),
      error: (message) => void lines.push({ level: 'error', message }),
    };
    const runner = new TimerRunner({
      connection: proxy.url,
      prefix,
      handlers: { job: job.handler },
      leaseMs: LEASE_MS,
      consumers,
      logger,
    });
    closers.push(() => runner.close(0));
    if (consumers === 'external') {
      // as @nestjs/bullmq's processors are made (SundialWorkerModule): BullMQ Workers of the host, attached
      const worker = new Worker<FireJobData, unknown>(
        runner.keys.queueName(0),
        (bullJob) => runner.processFireJob(0, bullJob.data),
        {
          connection: { host: '127.0.0.1', port: proxy.port, maxRetriesPerRequest: null },
          ...fireConsumerOptions({ prefix, leaseMs: LEASE_MS }),
          autorun: false,
        },
      );
      worker.on('error', (error) => void lines.push({ level: 'error', message: error.message }));
      closers.push(() => worker.close());
      runner.attachConsumer(worker);
    }
    /** The timer ran once and is settled; its BullMQ job is finished: none waits or is active. */
    const ranOnce = async () => {
      await waitFor(() => job.calls.length > 0, { timeoutMs: 8_000, what: 'the run' }); // deadline: a lock is 40 s
      expect(job.calls.map((ctx) => [ctx.key, ctx.version])).toEqual([['k', timer.version]]);
      const settled = await waitFor(async () => {
        const row = await timers.get('k');
        return row?.status === 'completed' && row;
      });
      expect(settled).toMatchObject({ runCount: 1 });
      const claims = (await timers.history('k')).filter((entry) => entry.event === 'claimed');
      expect(claims).toHaveLength(1);
      const queue = `${prefix}:${runner.keys.queueName(0)}`;
      await waitFor(async () => (await raw.llen(`${queue}:active`)) === 0, { what: 'the job finished' });
      expect(await raw.llen(`${queue}:wait`)).toBe(0);
      expect(job.calls).toHaveLength(1);
      // a finish's reply is dropped after the run, as Redis answers it: counted by the proxy a moment later
      await waitFor(() => proxy.dropped > 0, { what: 'the reply dropped' });
      expect(proxy.dropped).toBe(1);
    };
    return { runner, lines, ranOnce };
  }

  it.each(['own', 'external'] as const)(
    'runs its timer once, within seconds of the reconnect (%s consumers)',
    async (consumers) => {
      const { runner, lines, ranOnce } = await handedOff(consumers);
      proxy.dropReplyTo({ matches: isTake });
      const started = Date.now();
      await runner.start();
      await ranOnce();
      expect(Date.now() - started).toBeLessThan(LEASE_MS);
      expect(lines.filter((line) => line.message.includes('put back to wait'))).toHaveLength(1);
    },
  );

  // The same lost reply on the finish: ioredis sends it again, and BullMQ's answer is `Missing key`.
  it('a finish whose reply was lost: finished once, and the warn says the job was gone, not that its lock lapsed', async () => {
    const { runner, lines, ranOnce } = await handedOff('own');
    proxy.dropReplyTo({ matches: isFinish });
    await runner.start();
    await ranOnce();
    await waitFor(() => lines.length > 0, { what: "BullMQ's refusal of the finish sent again" });
    expect(lines).toEqual([
      {
        level: 'warn',
        message: expect.stringMatching(
          /^Sundial runner, partition 0: fire job \S+ was gone when its finish reached Redis \(its finish sent again after a reconnect.*BullMQ said "Missing key for job/,
        ),
      },
    ]);
  });
});
