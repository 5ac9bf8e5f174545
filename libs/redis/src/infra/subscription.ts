import { refusals, type SundialLogger } from '@sundial/core';
import type { RedisOptions } from 'ioredis';
import type { RedisClient } from './connection';
import { ConnectionCause } from './connection-cause';

/**
 * The options of a connection a `Subscription` keeps subscribed: it re-subscribes the connection itself,
 * so ioredis must not. ioredis's own re-subscription after a reconnect comes from what the connection had
 * confirmed before it dropped; when it dropped again before Redis confirmed that re-SUBSCRIBE, the
 * command was rejected with the other queued ones after maxRetriesPerRequest reconnect attempts, and
 * nothing asked for the channels again: the connection stayed deaf for good (and the rejection, of a
 * promise nobody holds, ended a plain Node process). test/redis/resubscribe-cut.test.ts.
 */
export const SUBSCRIBER_OPTIONS: RedisOptions = { autoResubscribe: false };

/**
 * How long a dispatcher's or runner's start waits for its first subscription. Longer than ioredis gives
 * a queued command (20 reconnect attempts, ~10 s): a SUBSCRIBE refused in a short outage is tried again
 * once Redis is back instead of failing the start. Shorter than the apps' startup probe (60 s): past it
 * start fails with what went wrong, and the app exits 1, rather than being killed by the probe unheard.
 */
export const START_SUBSCRIBE_MS = 30_000;

/** The bound starts use: START_SUBSCRIBE_MS, but for a test that shortens it (`shortenStartSubscribeForTests`). */
let startSubscribeMs = START_SUBSCRIBE_MS;

/** How long a dispatcher's or runner's start waits for its first subscription now (START_SUBSCRIBE_MS). */
export function startSubscribeLimitMs(): number {
  return startSubscribeMs;
}

/**
 * For tests only (not exported by the lib's index, no option, no env): the starts of this module
 * instance wait `ms` instead of START_SUBSCRIBE_MS, so a test sees the bound pass in seconds
 * (test/redis/start-subscribe.test.ts). Called without `ms`, restores START_SUBSCRIBE_MS.
 */
export function shortenStartSubscribeForTests(ms: number = START_SUBSCRIBE_MS): void {
  startSubscribeMs = ms;
}

/** How soon a SUBSCRIBE that Redis refused on a connection that stayed up (an ACL error) is tried again. */
const REFUSED_RETRY_MS = 1_000;

/**
 * Keeps one connection subscribed to `channels` for its life: SUBSCRIBE now, and again each time the
 * connection is ready (after every reconnect, whatever it had or was confirmed before), until `close`.
 * SUBSCRIBE of a channel the connection has is a no-op, so a needless one costs one round trip.
 * On a Cluster, ioredis's pub/sub connection re-subscribes itself when it is re-made (what its last
 * fully subscribed one had); the re-SUBSCRIBE at each 'ready' of the cluster is a safety net.
 */
export class Subscription {
  /** Settles once the first SUBSCRIBE has its answer: whether it was confirmed. */
  readonly firstAttempt: Promise<boolean>;
  private closed = false;
  private confirmed = false;
  private readonly onConfirmed = new Set<() => void>();
  /** the waiters of confirmedWithin, told at close that no confirmation will come */
  private readonly onClosed = new Set<() => void>();
  private failing: string | undefined;
  private retry: NodeJS.Timeout | undefined;
  /** why a SUBSCRIBE that ioredis gave up failed (`connect ECONNREFUSED …`, not `Reached the max retries …`) */
  private readonly cause: ConnectionCause;

  /**
   * `onResubscribed` runs each time Redis confirms the channels again after the first time (after a
   * reconnect): what was published while the connection was away was not heard.
   */
  constructor(
    private readonly connection: RedisClient,
    private readonly channels: readonly string[],
    private readonly what: string,
    private readonly logger: Pick<SundialLogger, 'warn' | 'info'>,
    private readonly onResubscribed: () => void = () => undefined,
  ) {
    this.cause = new ConnectionCause(connection);
    this.firstAttempt = this.subscribe().finally(() => {
      // From now on, not before: the first SUBSCRIBE is still queued for the first 'ready'.
      if (!this.closed) connection.on('ready', this.again);
    });
  }

  /**
   * Resolves once Redis has confirmed every channel (at once if it has); rejects after `deadlineMs`
   * with what the last attempt failed on. Subscribing goes on either way.
   */
  confirmedWithin(deadlineMs: number): Promise<void> {
    if (this.confirmed) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = (): void => {
        clearTimeout(timer);
        this.onClosed.delete(abandon);
        resolve();
      };
      const abandon = (): void => {
        clearTimeout(timer);
        reject(refusals.closedWhileStarting());
      };
      const timer = setTimeout(() => {
        this.onConfirmed.delete(done);
        this.onClosed.delete(abandon);
        const why = this.failing ?? 'Redis did not answer';
        reject(new Error(`could not subscribe to ${this.what} within ${deadlineMs} ms: ${why}`));
      }, deadlineMs);
      this.onConfirmed.add(done);
      this.onClosed.add(abandon);
    });
  }

  /** Stops re-subscribing (before the connection is closed). */
  close(): void {
    this.closed = true;
    clearTimeout(this.retry);
    this.cause.stop();
    this.connection.off('ready', this.again);
    this.onConfirmed.clear();
    for (const abandon of this.onClosed) abandon();
    this.onClosed.clear();
  }

  private readonly again = (): void => {
    if (!this.closed) void this.subscribe();
  };

  private async subscribe(): Promise<boolean> {
    clearTimeout(this.retry);
    try {
      await this.connection.subscribe(...this.channels);
    } catch (error) {
      if (this.closed) return false;
      const message = this.cause.of(error as Error).message;
      if (this.failing === undefined) {
        this.logger.warn(
          `Sundial could not subscribe to ${this.what}: ${message}; trying again once Redis is back`,
        );
      }
      this.failing = message;
      // A refusal on a connection that stayed up brings no 'ready': try again on a timer.
      if (this.connection.status === 'ready') this.retry = setTimeout(this.again, REFUSED_RETRY_MS);
      return false;
    }
    if (this.failing !== undefined) this.logger.info(`Sundial subscribed to ${this.what} again`);
    this.failing = undefined;
    if (this.confirmed) {
      if (!this.closed) this.onResubscribed();
      return true;
    }
    this.confirmed = true;
    for (const resolve of this.onConfirmed) resolve();
    this.onConfirmed.clear();
    return true;
  }
}
