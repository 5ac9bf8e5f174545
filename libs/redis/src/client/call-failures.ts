import { refusals, SundialError } from '@sundial/core';
import { ConnectionCause } from '../infra/connection-cause';
import { isConnectionFailure } from '../infra/connection-failure';
import type { RedisClient } from '../infra/connection';
import { checkCommandTimeout, noAnswerWithin } from './command-timeout';
import type { SentWrites } from './sent-writes';

/**
 * What a `RedisTimers` call's failure tells its caller (docs/spec.md §5.5): a connection failure is
 * `unavailable` — or `outcome-unknown` for a write a command of which that changes data was sent (one
 * never sent, Redis away before it, or refused by Redis, OOM or READONLY: ran nothing, changed nothing) —
 * named by the connection's own error (ECONNREFUSED), not ioredis's "max retries", "Connection is closed.".
 */
export class CallFailures {
  private readonly cause: ConnectionCause;

  constructor(
    redis: RedisClient,
    private readonly commandTimeoutMs: number | undefined,
  ) {
    this.cause = new ConnectionCause(redis);
  }

  /** A call's failure, as its caller is told it. */
  of(error: unknown, write: boolean, sent: SentWrites): unknown {
    if (!isConnectionFailure(error)) return error;
    const told = this.told(error);
    if (!write) return refusals.unavailable(told);
    if (sent.any) return refusals.outcomeUnknown(told);
    // cut off between its request id's pin and its script: no timer changed, the pin may stay
    return sent.pinned ? refusals.unsentAfterPin(told) : refusals.unavailable(told);
  }

  /** A start's outage as `unavailable` (a start that waited in vain says so itself: RedisStartTimeout). */
  unreachable(error: unknown): unknown {
    const outage = isConnectionFailure(error) && !(error instanceof SundialError);
    return outage ? refusals.unavailable(this.told(error)) : error;
  }

  told<E>(error: E): E | Error {
    const cause = error instanceof Error ? this.cause.of(error) : error;
    return noAnswerWithin(cause, checkCommandTimeout(this.commandTimeoutMs));
  }

  stop(): void {
    this.cause.stop();
  }
}
