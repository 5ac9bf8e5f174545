import { freePort } from '@sundial/testing';
import { RedisPing } from './redis-ping';
import { waitForRedis } from './wait-for-redis';

/** What the app logs meanwhile. */
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
    const ping = new RedisPing(`redis://127.0.0.1:${await freePort()}`);
    const logger = recordingLogger();
    try {
      await expect(waitForRedis(ping, logger, 1_000)).rejects.toThrow(
        /^Redis did not answer within 1000 ms at start: /,
      );
      expect(logger.lines).toEqual([
        expect.stringMatching(/^waiting up to 1000 ms for Redis before starting: /),
      ]);
    } finally {
      await ping.close();
    }
  });
});
