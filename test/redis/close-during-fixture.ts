import type { SundialError } from '@sundial/core';
import { Dispatcher, RedisTimers, TimerRunner } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { recordingLogger } from './library-host-fixture';

/** Well under a start's own bounds (START_REDIS_WAIT_MS, START_SUBSCRIBE_MS: 30 s). */
const PROMPT_MS = 3_000;

/** How a start closed under it settles: at once, `disposed`, blaming no one (closeDuring). */
export const closedWhileStarting = {
  error: {
    reason: 'disposed',
    message: 'Closed while starting: close() (or dispose()) was called before the start was done.',
  },
  prompt: true,
  lines: [],
};

/** Waits until `logger` has a line starting with `line`, closes, and says how the start settled and when. */
export async function closeDuring(
  start: Promise<void>,
  logger: { lines: string[] },
  line: string,
  close: () => Promise<void>,
): Promise<{ error: { reason: string; message: string }; prompt: boolean; lines: string[] }> {
  const settled = start.then(
    () => ({ reason: 'started', message: '' }),
    (error: SundialError) => error,
  );
  await waitFor(() => logger.lines.some((seen) => seen.startsWith(line)), { what: line });
  const closedAt = Date.now();
  await close();
  const { reason, message } = await settled;
  return {
    error: { reason, message },
    prompt: Date.now() - closedAt < PROMPT_MS,
    lines: logger.lines.filter((seen) => /did not answer|within 30000 ms/.test(seen)),
  };
}

/**
 * A Dispatcher, a TimerRunner and a RedisTimers on `connection`, each closed once its start logs that it
 * waits for Redis: how each start settled (closeDuring), in that order.
 */
export function closeEachWhileWaiting(connection: string): ReturnType<typeof closeDuring>[] {
  const dispatcherLog = recordingLogger();
  const dispatcher = new Dispatcher({ connection, logger: dispatcherLog });
  const runnerLog = recordingLogger();
  const runner = new TimerRunner({ connection, handlers: {}, logger: runnerLog });
  const timersLog = recordingLogger();
  const timers = new RedisTimers({ connection, logger: timersLog });
  const waiting = 'waiting up to 30000 ms for Redis before starting';
  return [
    closeDuring(dispatcher.start(), dispatcherLog, waiting, () => dispatcher.close()),
    closeDuring(runner.start(), runnerLog, waiting, () => runner.close(0)),
    closeDuring(timers.connect(), timersLog, waiting, () => timers.dispose()),
  ];
}
