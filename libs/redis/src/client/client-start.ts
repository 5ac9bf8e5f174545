import { refusals, SundialError, type SundialLogger } from '@sundial/core';
import { setTimeout } from 'node:timers/promises';
import { isConnectionFailure } from '../infra/connection-failure';
import { RedisStartTimeout } from '../infra/wait-for-redis';

/** Between two tries of a start that a Redis slow to answer cut short. */
const RETRY_MS = 100;

export interface StartTries {
  /** how long the start may wait for Redis in all (`startWaitMs`) */
  waitMs: number;
  logger: Pick<SundialLogger, 'warn' | 'info'>;
  /** the client was closed meanwhile: no try more */
  stopped: () => boolean;
  /** a connection failure as it is told (a command's timeout as `commandTimeoutMs`) */
  told: (error: Error) => Error;
}

/**
 * A client's start (`RedisTimers.connect()`), tried again within its wait: Redis answering the start's
 * first PING (which `steps` waits for, given the wait) says little of the next commands — a Redis loaded or
 * frozen for a moment leaves one of them (`FUNCTION LOAD`, say) unanswered past `commandTimeoutMs`, which
 * is the outage the start waits through, not a failed start. Said once, as the first wait says it
 * (wait-for-redis.ts); past the wait, `RedisStartTimeout` with the last cause. A refusal that is not an
 * outage and a start that waited in vain already (a SundialError) end it; so does a client closed meanwhile,
 * `Closed while starting` (reason `disposed`), whatever then failed on the connection the close shut. With
 * no wait (a call's own start), one try, its error as it is.
 */
export async function startWithin(
  { waitMs, logger, stopped, told }: StartTries,
  steps: (waitMs: number) => Promise<void>,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  let waiting = false;
  for (let first = true; ; first = false) {
    try {
      await steps(first ? waitMs : 0);
    } catch (error) {
      // closed meanwhile: what failed on the connection the close shut is the close's doing, not Redis's
      if (stopped()) throw refusals.closedWhileStarting();
      if (!isConnectionFailure(error) || error instanceof SundialError) throw error;
      const why = told(error);
      if (Date.now() >= deadline) throw waitMs > 0 ? new RedisStartTimeout(waitMs, why) : error;
      if (!waiting) logger.warn(`waiting up to ${waitMs} ms for Redis before starting: ${why.message}`);
      waiting = true;
      await setTimeout(RETRY_MS);
      continue;
    }
    // closed as it ended: not started for its caller (start-unless-closed.ts says why)
    if (stopped()) throw refusals.closedWhileStarting();
    if (waiting) logger.info('Redis answers: starting');
    return;
  }
}
