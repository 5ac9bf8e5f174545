import { silentLogger, type SundialLogger } from '@sundial/core';
import { Dispatcher, Reconciler, RedisTimers, TimerRunner } from '@sundial/redis';
import { type RedisServer, startRedis, waitFor, within } from '@sundial/testing/harness';
import { recorder } from './fire-fixture';

const quiet = silentLogger;
const GRACE_MS = 300;
/**
 * A liveness bound, not a measurement: the grace, the runner's bounded wait for Redis at close
 * (CLOSE_REDIS_WAIT_MS, 3 s), ioredis's disconnectTimeout (2 s: a socket whose peer never answers the
 * FIN) and a margin. Before the fix close() never returned while Redis was frozen (BullMQ's close and
 * the hand-back waited on Redis for as long as it stayed away).
 */
const CLOSE_DEADLINE_MS = GRACE_MS + 3_000 + 2_000 + 2_000;
const LEASE_MS = 1_500;

/**
 * Issue 12 §3: a worker's SIGTERM must not hang while Redis is unreachable. Redis is frozen (SIGSTOP:
 * its sockets stay open and nothing answers, the hardest case for a client) with two runs in flight
 * whose handlers ignore their signals; `close()` returns within its grace plus the bounded wait,
 * records nothing, and leaves no connection reconnecting (jest would not exit). Once Redis is thawed,
 * the expired leases are settled per delivery mode: the at-least-once run runs again, the at-most-once
 * run is recorded lost.
 */
describe('TimerRunner.close() while Redis is unreachable', () => {
  let server: RedisServer;
  const closers: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    server?.signal('SIGCONT');
    for (const close of closers.reverse()) await close();
    await server?.stop();
  });

  /** A runner with an at-least-once and an at-most-once run in flight, whose handlers ignore their signals. */
  async function twoRunsInFlight(prefix: string) {
    const shared = { connection: server.url, prefix, logger: quiet, leaseMs: LEASE_MS };
    const timers = new RedisTimers(shared);
    closers.push(() => timers.dispose());
    const dispatcher = new Dispatcher(shared);
    closers.push(() => dispatcher.close());
    const errors: string[] = [];
    const logger: SundialLogger = { ...quiet, error: (message) => errors.push(message) };
    const stubborn = recorder(() => new Promise(() => undefined));
    const runner = new TimerRunner({ ...shared, logger, handlers: { job: stubborn.handler } });
    await Promise.all([dispatcher.start(), runner.start()]);
    const options = { handler: 'job', delay: 0, removeOnComplete: false } as const;
    await timers.schedule({ ...options, key: 'least', delivery: 'at-least-once' });
    await timers.schedule({ ...options, key: 'most', delivery: 'at-most-once' });
    await waitFor(() => stubborn.calls.length === 2, { what: 'both runs to start' });
    return { shared, timers, runner, errors, stubborn };
  }

  it('Redis frozen: returns within its grace, records nothing, and the leases settle the runs once Redis is back', async () => {
    const { shared, timers, runner, errors, stubborn } = await twoRunsInFlight('frozen');
    server.signal('SIGSTOP');
    await within(runner.close(GRACE_MS), CLOSE_DEADLINE_MS, 'close()');
    expect(stubborn.calls.map((ctx) => ctx.signal.aborted)).toEqual([true, true]);
    expect(errors).toContainEqual(expect.stringMatching(/Redis did not answer/));

    server.signal('SIGCONT');
    const again = recorder();
    const successor = new TimerRunner({ ...shared, handlers: { job: again.handler } });
    closers.push(() => successor.close(0));
    const reconciler = new Reconciler({ ...shared, intervalMs: 200 });
    closers.push(() => reconciler.close());
    await successor.start();
    reconciler.start();

    const settled = await waitFor(
      async () => {
        const [least, most] = await Promise.all([timers.get('least'), timers.get('most')]);
        return least?.status === 'completed' && most?.status === 'failed' && { least, most };
      },
      { timeoutMs: 20_000, intervalMs: 100, what: 'both runs to be settled' },
    );
    // at-least-once: run again by the successor; at-most-once: recorded lost, never run again.
    expect(again.calls.map((ctx) => ctx.key)).toEqual(['least']);
    expect(settled.least).toMatchObject({ runCount: 2, last: { status: 'ok' } });
    expect(settled.most).toMatchObject({
      runCount: 1,
      last: { status: 'failed', error: { reason: 'lost' } },
    });
  }, 60_000);
});
