import {
  DEFAULT_REQUEST_WINDOW_MS,
  heldForNextStep,
  isSundialError,
  refusals,
  requestPins,
  sameRequest,
  type WriteOptions,
} from '@sundial/core';
import type { RedisClient } from '../infra/connection';
import { type CallRequests, freshRequests, namedCall } from '../store/requests';
import { SentWrites } from './sent-writes';

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
  /**
   * The `partOf` pins a refused step kept for the request's next step (`heldForNextStep`: PUT's create
   * refused duplicate-key, for its replace, which this process sends next), by pin key: that step's id.
   */
  private readonly held = new Map<string, string>();

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
    const forget = async (error?: unknown) => {
      // PUT's create refused duplicate-key keeps its request's pin for the replace (heldForNextStep)
      const next = heldForNextStep(operation, options, error);
      const whole = next === undefined ? undefined : `${this.prefix}:request:${options.partOf?.requestId}`;
      if (next !== undefined && whole !== undefined && made.includes(whole)) this.hold(whole, next);
      const gone = made.filter((key) => key !== whole);
      await Promise.all(gone.map((key) => this.redis.del(key).catch(() => undefined)));
    };
    let repeated = false;
    for (const pin of pins) {
      const key = `${this.prefix}:request:${pin.id}`;
      const first = await SentWrites.pin(() =>
        this.redis.set(key, pin.fingerprint, 'PX', this.windowMs, 'NX', 'GET'),
      );
      if (first === null) made.push(key);
      else if (!sameRequest(first, pin.fingerprint, pin.operation, pin.args)) {
        await forget();
        throw refusals.idempotencyConflict(pin.id, pin.field);
      } else if (options.requestId !== undefined && this.held.get(key) === options.requestId) {
        // the next step of the request whose pin its first step kept: the pin is this call's now
        this.held.delete(key);
        made.push(key);
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
      if (isSundialError(error)) await forget(error);
      throw error;
    }
  }

  /**
   * Keeps `key` for the step `next`. A step never sent (a library caller's) is not held forever here: past
   * MAX_HELD the oldest goes, its pin staying in Redis for the window, as a call cut off keeps its pins.
   */
  private hold(key: string, next: string): void {
    this.held.delete(key);
    this.held.set(key, next);
    if (this.held.size > MAX_HELD) this.held.delete(this.held.keys().next().value!);
  }
}

/** held pins remembered at most (each is one PUT between its two calls) */
const MAX_HELD = 1_000;
