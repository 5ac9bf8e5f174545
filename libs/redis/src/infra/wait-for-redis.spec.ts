import { freePort } from '@sundial/testing';
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
    const redis = openRedis(`redis://127.0.0.1:${await freePort()}`, { maxRetriesPerRequest: 1 });
    const logger = recordingLogger();
    try {
      await expect(waitForRedis(redis, logger, { deadlineMs: 1_000 })).rejects.toThrow(
        /^Redis did not answer within 1000 ms at start: /,
      );
      expect(logger.lines).toEqual([
        expect.stringMatching(/^waiting up to 1000 ms for Redis before starting: /),
      ]);
    } finally {
      await closeRedis(redis);
    }
  });

  it('keeps the bound when a ping is retried for longer than the time left', async () => {
    // ioredis retries a queued command maxRetriesPerRequest times (~10 s with 20): the wait is not.
    const redis = openRedis(`redis://127.0.0.1:${await freePort()}`, { maxRetriesPerRequest: 20 });
    const started = Date.now();
    try {
      await expect(waitForRedis(redis, recordingLogger(), { deadlineMs: 1_000 })).rejects.toThrow(
        /^Redis did not answer within 1000 ms at start: no answer/,
      );
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await closeRedis(redis);
    }
  });
});
