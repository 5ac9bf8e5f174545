import type { InjectionToken } from '@nestjs/common';
import type { Delivery, TimerSpec } from '@sundial/core';
import type { HandlerOptions } from './on-timer.decorator';
import { stackedMetadata } from './stacked-metadata';

/** On a `@DistributedCron` method: its `DistributedCronMetadata[]`, one per decorator, in source order. */
export const DISTRIBUTED_CRON = Symbol('sundial:distributed-cron');

/**
 * Where a cron expression comes from: written in code, a `ConfigService` key (@nestjs/config), or a
 * provider whose value is the expression string.
 */
export type CronExpressionSource = string | { config: string } | { inject: InjectionToken };

/** Sundial's run policies (docs/spec.md §3.3a–b) and slot policies (§3.3c), written on the row as given. */
export const CRON_POLICY_OPTIONS = [
  'overlap',
  'retry',
  'pauseAfterFailures',
  'catchup',
  'catchupWindow',
  'jitter',
  'startAt',
  'endAt',
] as const;

export type CronPolicyOptions = Pick<TimerSpec, (typeof CRON_POLICY_OPTIONS)[number]>;

/**
 * The options of `@nestjs/schedule`'s `@Cron` that mean something cluster-wide, under the same names, so
 * a migration is a rename; plus Sundial's own policies. `utcOffset`, `unrefTimeout`, `threshold`,
 * `initialDelay` have no equivalent (one row runs in whichever replica claims the slot).
 */
export interface DistributedCronOptions extends CronPolicyOptions, HandlerOptions {
  /** IANA time zone of the expression (default 'UTC'; `@Cron` defaults to the process's zone) */
  timeZone?: string;
  /**
   * Default `true`: a slot that comes while the previous run goes on is skipped and counted
   * (`sundial_runs_skipped_total`), or handled as `overlap` says. `false` is `overlap: 'allow'`: the next
   * slot is armed when a run is claimed, so runs may overlap (what `@Cron`'s `false` does per process).
   * Given together with an `overlap` that says otherwise, the boot stops.
   */
  waitForCompletion?: boolean;
  /** `true`: the row is removed (as if the decorator were gone) */
  disabled?: boolean;
  /** default 'at-least-once': a run whose worker died runs again; 'at-most-once': recorded lost */
  delivery?: Delivery;
}

export interface DistributedCronMetadata extends DistributedCronOptions {
  kind: 'cron';
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
  const metadata: DistributedCronMetadata = { ...options, kind: 'cron', name, expression };
  return stackedMetadata(DISTRIBUTED_CRON, metadata, options, `@DistributedCron('${name}')`);
}
