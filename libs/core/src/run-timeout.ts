import { type Clock, realClock } from './clock';
import { type Duration, durationText, toMs } from './duration';
import { refusals } from './refusals';
import { showValue } from './show-value';
import type { TimerContext, TimerHandler } from './types';

// Why this exists: a handler that never ends holds its run for ever — its lease is renewed while the
// process lives, so a cron with the default overlap `skip` skips every slot after it, silently. A
// timeout bounds the run: the handler's signal aborts and the run is recorded failed (reason
// `timeout`), so retry and pauseAfterFailures apply and the next slot is armed. It wraps the handler,
// so both backends (the in-memory engine and a TimerRunner) behave the same without knowing of it.

const MAX_TIMEOUT_MS = 365 * 86_400_000;

/** The error a timed-out run's signal aborts with, and the run's recorded failure (`reason: 'timeout'`). */
export class RunTimeoutError extends Error {
  override readonly name = 'RunTimeoutError';
  readonly reason = 'timeout';
}

export interface TimeoutOptions {
  /** the handler's name, for the message (default: the function's name) */
  name?: string;
  /** where the wait is armed: the backend's clock (a VirtualClock in tests; default the real one) */
  clock?: Pick<Clock, 'setTimeout' | 'clearTimeout'>;
  /** the option's name in a refusal (default `timeout`) */
  field?: string;
  /** whose timeout it is, for the message: the handler's own (default) or its timer's (the spec's `timeout`) */
  of?: 'handler' | 'timer';
}

/** A run timeout in ms: a positive number of ms or a Duration, at most 365 days; else `invalid`. */
export function runTimeoutMs(timeout: unknown, field = 'timeout'): number {
  const ms = toMs(timeout as number | Duration, field);
  if (ms < 1 || ms > MAX_TIMEOUT_MS) {
    throw refusals.invalid(
      field,
      `${field} ${showValue(timeout)} is not between 1 ms and 365 days`,
      `Write ${field} as how long one run may take, e.g. "30s" or "15m".`,
    );
  }
  return ms;
}

/**
 * `handler` bounded to `timeout` per run (docs/spec.md §3.2): when a run's promise has not settled by
 * then, its `ctx.signal` aborts with a RunTimeoutError and the run fails with it (`last.error.reason`
 * `'timeout'`). What the handler does after is not waited for and its result is not recorded. A handler
 * that returns no promise is not timed. The handler's own signal still aborts on a cancel or a close.
 */
export function withTimeout<P>(
  handler: TimerHandler<P>,
  timeout: number | Duration,
  options: TimeoutOptions = {},
): TimerHandler<P> {
  const ms = runTimeoutMs(timeout, options.field);
  const clock = options.clock ?? realClock;
  const name = options.name ?? (handler.name || 'handler');
  const whose = options.of === 'timer' ? "its timer's timeout" : 'its timeout';
  return (payload, ctx) => {
    const outer = ctx.signal;
    const controller = new AbortController();
    const forward = (): void => controller.abort(outer.reason);
    if (outer.aborted) forward();
    else outer.addEventListener('abort', forward, { once: true });
    let result: unknown;
    try {
      result = handler(payload, withSignal(ctx, controller.signal));
    } catch (error) {
      outer.removeEventListener('abort', forward);
      throw error;
    }
    if (!isThenable(result)) {
      outer.removeEventListener('abort', forward);
      return result;
    }
    return new Promise((resolve, reject) => {
      const wait = clock.setTimeout(() => {
        outer.removeEventListener('abort', forward);
        const error = new RunTimeoutError(
          `The handler '${name}' did not end within ${durationText(ms)} (${whose}); its signal was aborted.`,
        );
        controller.abort(error);
        reject(error);
      }, ms);
      const ended = (): void => {
        clock.clearTimeout(wait);
        outer.removeEventListener('abort', forward);
      };
      result.then(
        (value) => (ended(), resolve(value)),
        (error: unknown) => (ended(), reject(error)),
      );
    });
  };
}

/** Whether a handler's result is a promise (or any thenable) to wait for. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}

/**
 * The run's context with the timed signal in place of its own; every other field read from the run's
 * context itself (its getters run on it: the Redis runner's `timer` is made on first read), not copied.
 */
function withSignal<P>(ctx: TimerContext<P>, signal: AbortSignal): TimerContext<P> {
  return new Proxy(ctx, {
    get: (target, field) => (field === 'signal' ? signal : Reflect.get(target, field, target)),
  });
}
