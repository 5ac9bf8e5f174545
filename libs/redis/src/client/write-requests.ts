import {
  DEFAULT_REQUEST_WINDOW_MS,
  isSundialError,
  refusals,
  requestPins,
  sameRequest,
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
 * is refused `idempotency-conflict`. So is the id of a whole request a call is one step of
 * (`WriteOptions.partOf`, the HTTP API's PUT), pinned the same way, first, to that request.
 */
export class WriteRequests {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly windowMs = DEFAULT_REQUEST_WINDOW_MS,
  ) {}

  /**
   * Runs one write with the requests of its calls; its arguments are validated already. A refusal, or a
   * result that says it `changed` nothing, is not remembered: the ids' pins go with it (those this call made).
   */
  run<T>(
    operation: string,
    args: unknown[],
    options: WriteOptions | undefined,
    write: (requests: CallRequests) => Promise<T>,
    changed: (result: T) => boolean = () => true,
  ): Promise<T> {
    // Most writes carry no request id: nothing to pin, and no async step of their own on the way.
    if (options?.requestId === undefined && options?.partOf === undefined) return write(freshRequests);
    return this.pinned(operation, args, options, write, changed);
  }

  /**
   * A write with the caller's request id, pinned to its operation and arguments — and the id of the
   * request it is one step of (`partOf`), pinned first to that request: one SET NX GET each.
   */
  private async pinned<T>(
    operation: string,
    args: unknown[],
    options: WriteOptions,
    write: (requests: CallRequests) => Promise<T>,
    changed: (result: T) => boolean,
  ): Promise<T> {
    const pins = requestPins(operation, args, options);
    const made: string[] = [];
    const forget = async () => {
      await Promise.all(made.map((key) => this.redis.del(key).catch(() => undefined)));
    };
    let repeated = false;
    for (const pin of pins) {
      const key = `${this.prefix}:request:${pin.id}`;
      const first = await this.redis.set(key, pin.fingerprint, 'PX', this.windowMs, 'NX', 'GET');
      if (first === null) made.push(key);
      else if (!sameRequest(first, pin.fingerprint, pin.operation, pin.args)) {
        await forget();
        throw refusals.idempotencyConflict(pin.id, pin.field);
      }
      if (pin.field === 'requestId') repeated = first !== null;
    }
    const own = pins.find((pin) => pin.field === 'requestId');
    const requests = own
      ? Object.assign((part: string) => ({ id: namedCall(own.id, part), memoryMs: this.windowMs }), {
          repeated,
          named: true,
        })
      : freshRequests;
    try {
      const result = await write(requests);
      if (!changed(result)) await forget();
      return result;
    } catch (error) {
      // A refusal changed nothing (its retry runs again); a failed connection may hide a write: kept.
      if (isSundialError(error)) await forget();
      throw error;
    }
  }
}
