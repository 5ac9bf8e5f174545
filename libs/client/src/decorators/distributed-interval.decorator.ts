import type { InjectionToken } from '@nestjs/common';
import type { Delivery, Duration } from '@sundial/core';
import type { CronPolicyOptions } from './distributed-cron.decorator';
import type { HandlerOptions } from './on-timer.decorator';
import { stackedMetadata } from './stacked-metadata';

/** On a `@DistributedInterval` method: its `DistributedIntervalMetadata[]`, one per decorator, in source order. */
export const DISTRIBUTED_INTERVAL = Symbol('sundial:distributed-interval');

/**
 * Where an interval's period comes from: written in code (ms or a Duration such as `'30s'`), a
 * `ConfigService` key (@nestjs/config; a number, a Duration or a string of digits = ms), or a provider
 * whose value is one — the sources of `@DistributedCron`'s expression.
 */
export type IntervalPeriodSource = number | Duration | { config: string } | { inject: InjectionToken };

/**
 * `@nestjs/schedule`'s `@Interval` made cluster-wide; the options of `@DistributedCron` that mean something
 * for a period (no `timeZone`: an interval's grid is ms since its row was created).
 */
export interface DistributedIntervalOptions extends CronPolicyOptions, HandlerOptions {
  /**
   * Default `false`, as `@Interval` (whose `setInterval` does not wait for the method): each run is a free
   * run (`overlap: 'allow'`), a run that throws never stops the interval, runs may overlap. `true` waits
   * for the run (`overlap: 'skip'`, or `buffer-one` if given) — and then a run that throws (after its
   * `retry`) ends the interval until the next boot registers it again (docs/spec.md §3.3).
   */
  waitForCompletion?: boolean;
  /** `true`: the row is removed (as if the decorator were gone) */
  disabled?: boolean;
  /** default 'at-least-once': a run whose worker died runs again; 'at-most-once': recorded lost */
  delivery?: Delivery;
}

export interface DistributedIntervalMetadata extends DistributedIntervalOptions {
  kind: 'interval';
  name: string;
  every: IntervalPeriodSource;
}

/**
 * An interval declared in code that runs once per period however many replicas run (docs/spec.md §5.1):
 * the row `interval:<name>`, kept by the same registrar as `@DistributedCron`'s rows — created once,
 * replaced when the period or an option changed, removed when the decorator is gone or `disabled`. The
 * method is the handler `name` and gets `(payload, ctx)` like an `@OnTimer` method.
 */
export function DistributedInterval(
  name: string,
  every: IntervalPeriodSource,
  options: DistributedIntervalOptions = {},
): MethodDecorator {
  const metadata: DistributedIntervalMetadata = { ...options, kind: 'interval', name, every };
  return stackedMetadata(DISTRIBUTED_INTERVAL, metadata, options, `@DistributedInterval('${name}')`);
}
