import { silentLogger, type SundialLogger } from '@sundial/core';
import {
  Dispatcher,
  FireCommands,
  Reconciler,
  RedisTimers,
  type SundialObserver,
  TimerRunner,
} from '@sundial/redis';
import { type RedisServer, startRedis, waitFor, within } from '@sundial/testing/harness';
import { gate, recorder } from './fire-fixture';

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

    // deadline: the leases (1.5 s) expire, then a reconciler pass (every 0.2 s) settles both runs
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

  /**
   * docs/spec.md §4.7, §6.1: two runs end while Redis is frozen at a worker's close. The first's completion
   * goes out on the connection and waits unanswered; the second's waits behind it in the batcher (one call
   * of a partition on its way), never written. Once Redis is back it runs what it had read — the first run
   * is recorded ok — and the second's lease expires: recorded lost by the reconciler, which counts it.
   * Before, the worker counted both runs `ok` in `sundial_runs_total`: the metrics told an ok run the ledger
   * records lost. Now it counts the first (written: Redis records it) and only times the second.
   */
  it('a completion that never reached Redis is not counted as the outcome it did not record', async () => {
    const shared = {
      connection: server.url,
      prefix: 'unsent',
      partitions: 1,
      logger: quiet,
      leaseMs: LEASE_MS,
    };
    const timers = new RedisTimers(shared);
    closers.push(() => timers.dispose());
    const dispatcher = new Dispatcher(shared);
    closers.push(() => dispatcher.close());
    const reported: string[] = [];
    const observer: SundialObserver = {
      runFinished: ({ status }) => reported.push(`finished:${status}`),
      runUnanswered: ({ handler }) => reported.push(`unanswered:${handler}`),
      reconciled: ({ requeued, lost }) =>
        requeued + lost > 0 && reported.push(`reconciled:${requeued},${lost}`),
    };
    const ends = { first: gate(), second: gate() };
    const ending = recorder((ctx) => ends[ctx.key as keyof typeof ends].promise);
    const runner = new TimerRunner({ ...shared, observer, handlers: { job: ending.handler } });
    await Promise.all([dispatcher.start(), runner.start()]);
    const options = { handler: 'job', delay: 0, delivery: 'at-most-once', removeOnComplete: false } as const;
    await timers.schedule({ ...options, key: 'first' });
    await timers.schedule({ ...options, key: 'second' });
    await waitFor(() => ending.calls.length === 2, { what: 'both runs to start' });

    server.signal('SIGSTOP');
    const sent = jest.spyOn(FireCommands.prototype, 'complete');
    ends.first.open();
    await waitFor(() => sent.mock.calls.length === 1, { what: "the first run's completion to go out" });
    ends.second.open();
    await within(runner.close(GRACE_MS), CLOSE_DEADLINE_MS, 'close()');
    jest.restoreAllMocks();
    await waitFor(() => reported.length === 2, { what: 'both completions to be given up' });
    expect(reported.sort()).toEqual(['finished:ok', 'unanswered:job']);

    server.signal('SIGCONT');
    const reconciler = new Reconciler({ ...shared, observer, intervalMs: 200 });
    closers.push(() => reconciler.close());
    reconciler.start();
    // deadline: the lease (1.5 s) expires, then a reconciler pass (every 0.2 s) settles the second run
    const second = await waitFor(
      async () => {
        const timer = await timers.get('second');
        return timer?.status === 'failed' && timer;
      },
      { timeoutMs: 20_000, intervalMs: 100, what: 'the second run to be settled' },
    );
    expect(second).toMatchObject({ runCount: 1, last: { status: 'failed', error: { reason: 'lost' } } });
    expect(await timers.get('first')).toMatchObject({ status: 'completed', last: { status: 'ok' } });
    // the metrics say what the ledger says: one run ok, one lost. The pass reports its counts at its end,
    // after its other steps (a scope record's sweep, one more round trip), so after the row shows the loss.
    await waitFor(() => reported.length === 3, { what: "the reconciler pass's report" });
    expect(reported).toEqual(['finished:ok', 'unanswered:job', 'reconciled:0,1']);
  }, 60_000);
});
