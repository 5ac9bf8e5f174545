import { type ClockHandle, realClock } from '@sundial/core';

/**
 * How long a close (runner, dispatcher, reconciler) waits for Redis to take its last commands before it
 * drops its connections: a SIGTERM must not hang while Redis is unreachable or frozen.
 */
export const CLOSE_REDIS_WAIT_MS = 3_000;

/**
 * Whether `work` settled (either way) within `ms`; it goes on regardless. The timer is cleared as soon
 * as `work` settles, so no handle outlives the wait. On the real clock, which takes a wait past Node's
 * longest timer (a `close(graceMs)` of 30 days) in pieces: a bare `setTimeout` fired it after 1 ms.
 */
export async function settledWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ClockHandle | undefined;
  const timeout = new Promise<false>((resolve) => (timer = realClock.setTimeout(() => resolve(false), ms)));
  const settled = work.then(
    () => true,
    () => true,
  );
  try {
    return await Promise.race([settled, timeout]);
  } finally {
    if (timer) realClock.clearTimeout(timer);
  }
}
