import type { SundialLogger } from '@sundial/core';
import type { RedisPing } from './redis-ping';

/**
 * How long an app waits at start for Redis to answer before it exits 1: well under the startup probe of
 * deploy/k8s (60 s), which must also cover the start that follows.
 */
export const START_REDIS_WAIT_MS = 30_000;
const RETRY_MS = 500;

/**
 * Waits, before an app starts its service, until Redis answers (and can take writes). A pod started
 * while Redis is briefly unreachable (a restart, a failover) then starts a moment later, instead of
 * exiting 1 at its first command and waiting out Kubernetes' crash-loop back-off (10 s, 20 s, … up to
 * 5 min between tries). Past `deadlineMs` it fails saying why, and the app exits 1 (serve.ts).
 */
export async function waitForRedis(
  redis: Pick<RedisPing, 'ping'>,
  logger: Pick<SundialLogger, 'warn' | 'info'>,
  deadlineMs = START_REDIS_WAIT_MS,
): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  let waiting = false;
  for (;;) {
    try {
      await redis.ping();
      if (waiting) logger.info('Redis answers: starting');
      return;
    } catch (error) {
      const why = (error as Error).message;
      if (Date.now() >= deadline)
        throw new Error(`Redis did not answer within ${deadlineMs} ms at start: ${why}`, { cause: error });
      if (!waiting) logger.warn(`waiting up to ${deadlineMs} ms for Redis before starting: ${why}`);
      waiting = true;
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }
}
