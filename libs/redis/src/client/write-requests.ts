import {
  DEFAULT_REQUEST_WINDOW_MS,
  isSundialError,
  refusals,
  requestFingerprint,
  sameRequest,
  validateRequestId,
  type WriteOptions,
} from '@sundial/core';
import type { RedisClient } from '../infra/connection';
import { type CallRequests, freshRequests, namedCall } from '../store/requests';

/**
 * The request ids of RedisTimers' writes (docs/design.md "Repeated calls"). Without a caller's
 * `requestId` each script call gets a fresh id, so only ioredis's resend after a lost reply repeats it;
 * with one, every call of the operation is named after it and remembered for the window, so the caller's
 * retry answers as the first try did. The operation and its arguments are pinned to the id in
 * `P:request:<id>` (one SET NX GET, only for calls that carry an id): the same id with other arguments
 * is refused `idempotency-conflict`.
 */
export class WriteRequests {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly windowMs = DEFAULT_REQUEST_WINDOW_MS,
  ) {}

  /**
   * Runs one write with the requests of its calls; its arguments are validated already. A refusal, or a
   * result that says it `changed` nothing, is not remembered: the id's pin goes with it (if this call made it).
   */
  run<T>(
    operation: string,
    args: unknown[],
    options: WriteOptions | undefined,
    write: (requests: CallRequests) => Promise<T>,
    changed: (result: T) => boolean = () => true,
  ): Promise<T> {
    // Most writes carry no request id: nothing to pin, and no async step of their own on the way.
    if (options?.requestId === undefined) return write(freshRequests);
    return this.pinned(operation, args, options.requestId, write, changed);
  }

  /** A write with the caller's request id, pinned to its operation and arguments. */
  private async pinned<T>(
    operation: string,
    args: unknown[],
    id: unknown,
    write: (requests: CallRequests) => Promise<T>,
    changed: (result: T) => boolean,
  ): Promise<T> {
    const requestId = validateRequestId(id);
    const fingerprint = requestFingerprint(operation, args);
    const key = `${this.prefix}:request:${requestId}`;
    const first = await this.redis.set(key, fingerprint, 'PX', this.windowMs, 'NX', 'GET');
    if (first !== null && !sameRequest(first, fingerprint, operation, args)) {
      throw refusals.idempotencyConflict(requestId);
    }
    const requests = (part: string) => ({ id: namedCall(requestId, part), memoryMs: this.windowMs });
    const forget = async () => {
      if (first === null) await this.redis.del(key).catch(() => undefined);
    };
    try {
      const result = await write(Object.assign(requests, { repeated: first !== null, named: true }));
      if (!changed(result)) await forget();
      return result;
    } catch (error) {
      // A refusal changed nothing (its retry runs again); a failed connection may hide a write: kept.
      if (isSundialError(error)) await forget();
      throw error;
    }
  }
}
