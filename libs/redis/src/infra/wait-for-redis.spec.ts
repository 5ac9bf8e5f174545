import { freePort } from '@sundial/testing/harness';
import { closeRedis, openRedis } from './connection';
import { waitForRedis } from './wait-for-redis';

/** What the start logs meanwhile. */
function recordingLogger() {
  const lines: string[] = [];
  return {
    lines,
    warn: (message: string) => lines.push(message),
    info: (message: string) => lines.push(message),
  };
}

describe('waitForRedis', () => {
  it('fails past its deadline saying why, having said it waits (nothing listens on the port)', async () => {
    const port = await freePort();
    const redis = openRedis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: 1 });
    const logger = recordingLogger();
    // The connection's error, not the ping's 'Reached the max retries per request limit…' wrapping it.
    const refused = `connect ECONNREFUSED 127.0.0.1:${port}`;
    try {
      await expect(waitForRedis(redis, logger, { deadlineMs: 1_000 })).rejects.toThrow(
        `Redis did not answer within 1000 ms at start: ${refused}`,
      );
      expect(logger.lines).toEqual([`waiting up to 1000 ms for Redis before starting: ${refused}`]);
      // What a Nest boot shows, as every refusal: reason, field and fix beside the message.
      // Past the reconnect cadence's longest pause (2 s): a reconnect fails within it and says why. With
      // 100 ms the connection, pausing between attempts by then, often gave no error: the cause 'no answer'.
      await expect(waitForRedis(redis, logger, { deadlineMs: 2_500 })).rejects.toMatchObject({
        reason: 'unavailable',
        field: 'connection',
        // a plain Node service's Dispatcher, TimerRunner or RedisTimers has the option too, not only SundialModule
        fix: expect.stringContaining(
          'RedisTimers, Dispatcher or TimerRunner) and that its credentials are right; their startWaitMs option',
        ),
        cause: { message: refused },
      });
    } finally {
      await closeRedis(redis);
    }
  });

  it('keeps the bound when a ping is retried for longer than the time left', async () => {
    // ioredis retries a queued command maxRetriesPerRequest times (~10 s with 20): the wait is not. The
    // ping has no answer yet, and the wait says why: the connection's error.
    const redis = openRedis(`redis://127.0.0.1:${await freePort()}`, { maxRetriesPerRequest: 20 });
    const started = Date.now();
    try {
      await expect(waitForRedis(redis, recordingLogger(), { deadlineMs: 1_000 })).rejects.toThrow(
        /^Redis did not answer within 1000 ms at start: connect ECONNREFUSED 127\.0\.0\.1:\d+$/,
      );
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await closeRedis(redis);
    }
  });

  it('says nothing of waiting when the answer had come but the process was busy past 500 ms (a loaded boot)', async () => {
    // The reply is in (an I/O callback this turn of the event loop runs), but the boot held the thread for
    // 600 ms: the 500 ms timer is due too and, run first, said "no answer yet" of a Redis that had answered.
    // (Started from the check phase: the reply, set for the next one, is handled after the timers, as a
    // socket's reply is, in the poll phase.)
    const answered = { ping: () => new Promise<string>((resolve) => setImmediate(() => resolve('PONG'))) };
    const logger = recordingLogger();
    const waiting = await new Promise<Promise<void>>((started) =>
      setImmediate(() => {
        const wait = waitForRedis(answered, logger, { deadlineMs: 5_000 });
        const busyUntil = Date.now() + 600;
        while (Date.now() < busyUntil); // the boot's synchronous work on a loaded machine
        started(wait);
      }),
    );
    await waiting;
    expect(logger.lines).toEqual([]);
  });
});
