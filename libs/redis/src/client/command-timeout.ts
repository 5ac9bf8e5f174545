import { MAX_TIMEOUT_MS, refusals } from '@sundial/core';

/**
 * How long a `RedisTimers` call waits for each Redis reply (ioredis `commandTimeout`). A frozen Redis
 * (process stopped, a network path that drops packets without a reset) keeps its socket open and answers
 * nothing: without a bound every call, and every HTTP request of the scheduler, waited as long as it stayed
 * so. Well above a healthy reply (a script of a 500-timer scheduleMany takes milliseconds), well below an
 * HTTP client's or load balancer's patience (the CLI's is 30 s).
 */
export const DEFAULT_COMMAND_TIMEOUT_MS = 5_000;

/**
 * The longest bound ioredis can keep: its timer is Node's, and a longer one fires after 1 ms, so every
 * call would answer "no answer within <n> ms" at once.
 */
export const MAX_COMMAND_TIMEOUT_MS = MAX_TIMEOUT_MS;

/** `commandTimeoutMs` as given, or its default; anything but a whole number of ms from 1 to the most is refused. */
export function checkCommandTimeout(ms = DEFAULT_COMMAND_TIMEOUT_MS): number {
  if (!Number.isSafeInteger(ms) || ms < 1 || ms > MAX_COMMAND_TIMEOUT_MS) {
    throw refusals.invalid(
      'commandTimeoutMs',
      `commandTimeoutMs ${ms} is not a whole number of milliseconds from 1 to ${MAX_COMMAND_TIMEOUT_MS}.`,
      `Give how long a call waits for each Redis reply, e.g. ${DEFAULT_COMMAND_TIMEOUT_MS} (the default), at most ${MAX_COMMAND_TIMEOUT_MS} (Node's longest timer).`,
    );
  }
  return ms;
}

/**
 * ioredis's "Command timed out" told as what it means: Redis did not answer in time (it may run the
 * command later, once it answers again). Any other error is returned as it is.
 */
export function noAnswerWithin<E>(error: E, ms: number): E | Error {
  return error instanceof Error && error.message === 'Command timed out'
    ? new Error(`no answer within ${ms} ms, commandTimeoutMs`)
    : error;
}
