import { refusals, SundialError, type SundialLogger } from '@sundial/core';
import { ReplyError } from 'ioredis';
import { ConnectionCause, ERROR_EVENTS, type ErrorEvents } from './connection-cause';
import { isConnectionFailure } from './connection-failure';
import { whenSentinelsRefuse } from './sentinel-refusal';

/**
 * How long a start waits for Redis to answer before it fails: the apps (libs/server serve.ts), and the
 * library's own start (`Dispatcher`/`TimerRunner` `start()`, `RedisTimers.connect()`, so
 * `SundialWorkerModule` and `SundialModule` in a user's app). Well under the startup probe of deploy/k8s
 * (60 s), which must also cover the start that follows.
 */
export const START_REDIS_WAIT_MS = 30_000;
const RETRY_MS = 500;

export interface WaitForRedisOptions {
  /** give up after this long (default START_REDIS_WAIT_MS) */
  deadlineMs?: number;
  /**
   * Whether a failed ping means Redis is away for now (wait) rather than refusing us (fail at once:
   * a wrong password, an ACL refusal). Default `isConnectionFailure`.
   */
  isOutage?: (error: unknown) => boolean;
}

/**
 * Waits, before a start touches the store, until Redis answers. A process started while Redis is briefly
 * unreachable (a restart, a failover) then starts a moment later, instead of failing at its first command
 * and, on Kubernetes, waiting out the crash-loop back-off (10 s, 20 s, … up to 5 min between tries).
 * Logs once that it waits. Past `deadlineMs` it fails saying why; a refusal that is not an outage fails
 * at once with Redis's own error. Each ping is given only the time left (a queued command may be retried
 * by ioredis for ~10 s), so the bound holds and a ping that never settles cannot hang the start.
 */
export async function waitForRedis(
  redis: PingedConnection,
  logger: Pick<SundialLogger, 'warn' | 'info'>,
  { deadlineMs = START_REDIS_WAIT_MS, isOutage = isConnectionFailure }: WaitForRedisOptions = {},
): Promise<void> {
  // Redis refusing the connection's AUTH (WRONGPASS, NOAUTH) reaches a queued ping only sometimes (when
  // ioredis gives the queue up on a reconnect, it says max retries): the connection's own error says it;
  // so does a Sentinel's refusal (sentinel-refusal.ts), which ioredis retries for ever.
  let refuse: (error: unknown) => void = () => undefined;
  const refused = new Promise<never>((_, reject) => (refuse = reject));
  refused.catch(() => undefined);
  const onError = (error: unknown): void => {
    if (error instanceof ReplyError && !isOutage(error)) refuse(error);
  };
  for (const event of ERROR_EVENTS) redis.on?.(event, onError);
  const sentinels = whenSentinelsRefuse(redis);
  sentinels.refused.catch(refuse);
  const cause = new ConnectionCause(redis);
  try {
    await waitOrRefuse(redis, logger, deadlineMs, isOutage, refused, (error) => cause.of(error));
  } finally {
    cause.stop();
    sentinels.stop();
    for (const event of ERROR_EVENTS) redis.off?.(event, onError);
  }
}

/** What the wait pings; `status` 'end': closed by its owner (ioredis), never to answer again. */
type PingedConnection = ErrorEvents & { ping(): Promise<unknown>; readonly status?: string };

async function waitOrRefuse(
  redis: PingedConnection,
  logger: Pick<SundialLogger, 'warn' | 'info'>,
  deadlineMs: number,
  isOutage: (error: unknown) => boolean,
  refused: Promise<never>,
  causeOf: (error: Error) => Error,
): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  let waiting = false;
  const sayWaiting = (why: string): void => {
    if (!waiting) logger.warn(`waiting up to ${deadlineMs} ms for Redis before starting: ${why}`);
    waiting = true;
  };
  for (;;) {
    let why: unknown;
    // A ping queued until Redis is back (as a Cluster's or a Sentinel-found primary's is, for ~10 s before
    // ioredis gives it up) would say nothing meanwhile: the wait is told once it had no answer for RETRY_MS.
    // Said from the check phase: a reply read in the same turn of the event loop (the poll phase, after
    // the timers) settles the ping first — a boot that held the thread past RETRY_MS on a loaded machine
    // said "no answer yet" of a Redis that had answered.
    let settled = false;
    const silent = setTimeout(
      () =>
        setImmediate(() => {
          if (!settled) sayWaiting(causeOf(new Error('no answer yet')).message);
        }),
      RETRY_MS,
    );
    try {
      if (await answersWithin(Promise.race([redis.ping(), refused]), deadline - Date.now())) {
        if (waiting) logger.info('Redis answers: starting');
        return;
      }
      why = causeOf(new Error('no answer'));
    } catch (error) {
      if (!isOutage(error)) throw error;
      why = causeOf(error as Error);
    } finally {
      settled = true;
      clearTimeout(silent);
    }
    // closed by close() or dispose() meanwhile: no answer will come, and Redis is not to blame
    if (redis.status === 'end') throw refusals.closedWhileStarting();
    const message = (why as Error).message;
    if (Date.now() >= deadline) throw new RedisStartTimeout(deadlineMs, why as Error);
    sayWaiting(message);
    let timer: NodeJS.Timeout | undefined;
    const pause = new Promise(
      (resolve) => (timer = setTimeout(resolve, Math.min(RETRY_MS, deadline - Date.now()))),
    );
    await Promise.race([pause, refused]).finally(() => clearTimeout(timer));
  }
}

/**
 * For a probe that fails fast (no offline queue, so Redis being away shows as a plain error: a shut
 * stream, no answer, a full Redis): whether `error` means Redis is away rather than refusing this process.
 * A reply that is not a transient one (WRONGPASS, NOAUTH, NOPERM) is a refusal.
 */
export function isAwayNotRefused(error: unknown): boolean {
  return !(error instanceof ReplyError) || isConnectionFailure(error);
}

/**
 * A start that waited for Redis in vain: reason `unavailable`, field `connection`, a fix, and the wait's
 * last cause; a connection failure to isConnectionFailure.
 */
export class RedisStartTimeout extends SundialError {
  override readonly name = 'RedisStartTimeout';

  constructor(waitedMs: number, why: Error) {
    super(refusals.startWait(waitedMs, why.message));
    this.cause = why;
  }
}

/** Whether `ping` resolved within `ms` (false if not yet); rejects as it does. */
async function answersWithin(ping: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => (timer = setTimeout(resolve, Math.max(0, ms), false)));
  try {
    return await Promise.race([ping.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
