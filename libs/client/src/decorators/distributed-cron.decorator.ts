import { type InjectionToken, SetMetadata } from '@nestjs/common';
import type { Delivery } from '@sundial/core';

export const DISTRIBUTED_CRON = Symbol('sundial:distributed-cron');

/**
 * Where a cron expression comes from: written in code, a `ConfigService` key (@nestjs/config), or a
 * provider whose value is the expression string.
 */
export type CronExpressionSource = string | { config: string } | { inject: InjectionToken };

/**
 * The options of `@nestjs/schedule`'s `@Cron` that mean something cluster-wide, under the same names, so
 * a migration is a rename; plus Sundial's own. `utcOffset`, `unrefTimeout`, `threshold`, `initialDelay`
 * have no equivalent (one row runs in whichever replica claims the slot).
 */
export interface DistributedCronOptions {
  /** IANA time zone of the expression (default 'UTC'; `@Cron` defaults to the process's zone) */
  timeZone?: string;
  /**
   * Default `true`, and only `true`: a slot that comes while the previous run goes on is skipped and
   * counted (`sundial_runs_skipped_total`), never run alongside it. `false` is refused at boot.
   */
  waitForCompletion?: boolean;
  /** `true`: the row is removed (as if the decorator were gone) */
  disabled?: boolean;
  /** default 'at-least-once': a run whose worker died runs again; 'at-most-once': recorded lost */
  delivery?: Delivery;
}

export interface DistributedCronMetadata extends DistributedCronOptions {
  name: string;
  expression: CronExpressionSource;
}

/**
 * A cron declared in code that runs once per slot however many replicas run (docs/spec.md §5.1): at
 * boot a registrar keeps exactly one row per name (key `cron:<name>`), reschedules it when the
 * expression or zone changed, and removes it when the decorator is gone. The method is the handler
 * `name` and gets `(payload, ctx)` like an `@OnTimer` method.
 */
export function DistributedCron(
  name: string,
  expression: CronExpressionSource,
  options: DistributedCronOptions = {},
): MethodDecorator {
  const metadata: DistributedCronMetadata = { ...options, name, expression };
  return SetMetadata(DISTRIBUTED_CRON, metadata);
}
