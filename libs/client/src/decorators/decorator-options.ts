import { OptionReader, refusals } from '@sundial/core';
import { CRON_POLICY_OPTIONS, type DistributedCronMetadata } from './distributed-cron.decorator';
import type { OnTimerMetadata } from './on-timer.decorator';

const ON_TIMER_OPTIONS = ['timeout'] as const;
const DISTRIBUTED_CRON_OPTIONS = [
  'timeZone',
  'waitForCompletion',
  'disabled',
  'delivery',
  'timeout',
  ...CRON_POLICY_OPTIONS,
] as const;

/**
 * The options of an `@OnTimer` or `@DistributedCron` method, checked at boot: a field the decorator does
 * not know (a `timezone`, or `@nestjs/schedule`'s `utcOffset`, passed in a variable that TypeScript does
 * not check as a literal) is refused with a "did you mean", not ignored. `delivery` on `@OnTimer` is
 * refused with where it goes: it is each timer's.
 */
export function checkDecoratorOptions(
  owner: string,
  onTimer: OnTimerMetadata | undefined,
  cron: DistributedCronMetadata | undefined,
): void {
  if (onTimer !== undefined) {
    const { name, ...options } = onTimer;
    if ('delivery' in options) {
      throw refusals.invalid(
        'delivery',
        `${owner}: @OnTimer('${name}') takes no delivery: a timer's delivery is its own, given when it is scheduled.`,
        `Remove delivery from @OnTimer and schedule the timers it runs with it: timers.schedule({ key, handler: '${name}', delivery: 'at-most-once', … }) (@DistributedCron takes delivery as an option).`,
      );
    }
    OptionReader.of(`${owner} @OnTimer`, options, '{ timeout }').only(ON_TIMER_OPTIONS);
  }
  if (cron !== undefined) {
    const { name: _name, expression: _expression, ...options } = cron;
    OptionReader.of(`${owner} @DistributedCron`, options, '{ timeZone, delivery, … }').only(
      DISTRIBUTED_CRON_OPTIONS,
    );
  }
}
