import { silentLogger } from '@sundial/core';
import { Dispatcher, Reconciler, RedisTimers, TimerRunner } from '@sundial/redis';
import { connects, type RedisServer, startRedis, waitFor } from '@sundial/testing/harness';
import { gate, recorder } from './fire-fixture';

const quiet = silentLogger;
/** Longer than ioredis's retries per command on the runner's connection (20 reconnects, ~10.5 s). */
const OUTAGE_MS = 13_000;
/** Outlives the outage: the run's claim is still the runner's when Redis comes back. */
const LEASE_MS = 25_000;

/**
 * Issue 8 defect 3: a handler that succeeded while Redis was down must not run again. Redis is stopped
 * (AOF on, so its data survives) and started again on the same port after longer than the runner's
 * connection retries per command; the runner keeps the finished result, renews the lease, and completes
 * it once Redis is back.
 */
describe('a completion through a Redis outage', () => {
  let server: RedisServer;
  const closers: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    server = await startRedis({ args: ['--appendonly', 'yes', '--appendfsync', 'always'] });
  });
  afterAll(async () => {
    for (const close of closers.reverse()) await close();
    await server?.stop();
  });

  it('is sent when Redis is back: the run completes once and never runs again', async () => {
    const shared = { connection: server.url, prefix: 'o', logger: quiet };
    const timers = new RedisTimers(shared);
    closers.push(() => timers.dispose());
    const dispatcher = new Dispatcher(shared);
    closers.push(() => dispatcher.close());
    const reconciler = new Reconciler({ ...shared, intervalMs: 200 });
    closers.push(() => reconciler.close());
    const release = gate();
    const job = recorder(() => release.promise);
    const runner = new TimerRunner({ ...shared, handlers: { job: job.handler }, leaseMs: LEASE_MS });
    closers.push(() => runner.close(0));
    await Promise.all([dispatcher.start(), runner.start()]);
    reconciler.start();

    const timer = await timers.schedule({ key: 'o', handler: 'job', delay: 0, removeOnComplete: false });
    await waitFor(() => job.calls.length === 1, { what: 'the run to start' });
    const outage = server.restart(OUTAGE_MS);
    await waitFor(async () => !(await connects('127.0.0.1', server.port)), { what: 'Redis to go down' });
    release.open(); // the handler succeeds while Redis is down
    await outage;

    const done = await waitFor(
      async () => {
        const row = await timers.get('o').catch(() => null);
        return row?.status === 'completed' && row;
      },
      { timeoutMs: LEASE_MS, intervalMs: 200, what: 'the run to be completed' },
    );
    expect(done).toMatchObject({ id: timer.id, runCount: 1, last: { status: 'ok' } });
    expect(job.calls).toHaveLength(1);
  }, 90_000);
});
