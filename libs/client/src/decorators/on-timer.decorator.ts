import type { Duration } from '@sundial/core';
import { stackedMetadata } from './stacked-metadata';

/** On an `@OnTimer` method: its `OnTimerMetadata[]`, one per decorator, in source order. */
export const ON_TIMER = Symbol('sundial:on-timer');

/** How a handler's runs go, wherever it is declared (`@OnTimer`, `@DistributedCron`). */
export interface HandlerOptions {
  /**
   * How long one run may take (ms or a Duration, at most 365 d): then its `ctx.signal` aborts and the
   * run fails with reason `timeout` (retry and pauseAfterFailures apply; the next slot is armed). Default:
   * none — a run that never ends holds its timer for as long as its process lives.
   */
  timeout?: number | Duration;
}

export interface OnTimerMetadata extends HandlerOptions {
  name: string;
}

/**
 * Marks a provider method as the handler of the timers naming `name` (docs/spec.md §5.1). It runs inside
 * the app with its dependency injection, as `(payload, ctx)`: `ctx.signal`, `ctx.due`, `ctx.key`,
 * `ctx.version`. A name declared twice in one app stops it at boot. Stacked, each name runs the method.
 */
export function OnTimer(name: string, options: HandlerOptions = {}): MethodDecorator {
  const metadata: OnTimerMetadata = { ...options, name };
  return stackedMetadata(ON_TIMER, metadata, options, `@OnTimer('${name}')`);
}
