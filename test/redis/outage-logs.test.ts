import { TimerRunner } from '@sundial/redis';
import {
  outageLines,
  outageRecovered,
  type RedisServer,
  startRedis,
  waitFor,
} from '@sundial/testing/harness';
import { errorLogInterval } from '../../libs/redis/src/infra/error-throttle';
import { libraryHost, recordingLogger } from './library-host-fixture';

/** Redis is away this long: a few intervals of the shortened `still failing` line below. */
const OUTAGE_MS = 3_500;
const INTERVAL_MS = 1_000;

/**
 * A running dispatcher and runner through a Redis outage (redis-server killed, started again on its port
 * OUTAGE_MS later). Their BullMQ queues' and workers' `error` listeners logged each reconnect attempt
 * (~2.5 lines a second from the scheduler, ~1 from a worker); now each logs the first error, at most one
 * `still failing` line an interval counting those it left out, and `connected again` (docs/spec.md §5.5).
 */
describe('the BullMQ connections through a Redis outage', () => {
  let server: RedisServer;
  const saved = errorLogInterval.ms;

  beforeAll(async () => {
    server = await startRedis();
    errorLogInterval.ms = INTERVAL_MS;
  });
  afterAll(async () => {
    errorLogInterval.ms = saved;
    await server?.stop();
  });

  it('log the start of their errors once, a count an interval, and the recovery', async () => {
    const logger = recordingLogger();
    const { runner, dispatcher, close } = libraryHost({ connection: server.url, prefix: 'ol', logger });
    try {
      await Promise.all([runner.start(), dispatcher.start()]);
      const before = logger.lines.length;
      await server.restart(OUTAGE_MS);
      const sources = ['Sundial dispatcher queue', 'Sundial runner, partition 0'];
      await waitFor(() => sources.every((source) => outageRecovered(logger.lines, source)), {
        what: 'both connections to say they recovered',
      });
      for (const source of sources) {
        const { first, stillFailing, recovered, others } = outageLines(logger.lines.slice(before), source);
        // The first error says why (the connection lost or refused), once; no per-attempt lines.
        expect(first).toMatch(
          /^[^:]+(, partition 0)?: (connect ECONNREFUSED|Connection is closed|read ECONNRESET)/,
        );
        expect(others).toEqual([]);
        // A few seconds of reconnect attempts, counted at most once a second, then the recovery.
        expect(stillFailing.length).toBeGreaterThan(0);
        expect(stillFailing.length).toBeLessThanOrEqual(Math.ceil(OUTAGE_MS / INTERVAL_MS) + 1);
        expect(recovered).toBeDefined();
      }
    } finally {
      await close();
    }
  }, 30_000);

  it("log the runner's consumer watchdog's failed checks the same way", async () => {
    // Its checks read Redis every 100 ms (stallMs / 3, every consumer idle); with maxRetriesPerRequest 2 a
    // read fails ~150 ms into the outage: each check failed, and each logged a line.
    const logger = recordingLogger();
    const connection = { url: server.url, maxRetriesPerRequest: 2 };
    const runner = new TimerRunner({ connection, prefix: 'olw', logger, handlers: {}, consumerStallMs: 300 });
    const source = 'Sundial consumer watchdog';
    // A failed check waits out its read's reconnect attempts (~1 s apart here): a longer interval, so an
    // interval without one (which would end a run, error-throttle.ts) does not happen in the outage.
    errorLogInterval.ms = 2.5 * INTERVAL_MS;
    try {
      await runner.start();
      const before = logger.lines.length;
      await server.restart(OUTAGE_MS);
      await waitFor(() => outageRecovered(logger.lines, source), {
        what: 'the watchdog to say its checks read Redis again',
      });
      const { first, stillFailing, recovered, others } = outageLines(logger.lines.slice(before), source);
      // Why, not ioredis's wrapper (`Reached the max retries per request limit`).
      expect(first).toMatch(
        /^Sundial consumer watchdog: (connect ECONNREFUSED|Connection is closed|read ECONNRESET)/,
      );
      expect(others).toEqual([]);
      expect(stillFailing.length).toBeLessThanOrEqual(Math.ceil(OUTAGE_MS / errorLogInterval.ms) + 1);
      expect(recovered).toBeDefined();
    } finally {
      errorLogInterval.ms = INTERVAL_MS;
      await runner.close(0);
    }
  }, 30_000);
});
