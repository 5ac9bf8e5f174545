import { OptionReader, refusals } from '@sundial/core';
import { cronKey, intervalKey } from '../cron/cron-rows';
import { CRON_POLICY_OPTIONS, type DistributedCronMetadata } from './distributed-cron.decorator';
import type { DistributedIntervalMetadata } from './distributed-interval.decorator';
import type { OnTimerMetadata } from './on-timer.decorator';
import { checkRowSource } from './row-source-check';
import { refuseScheduleOptions } from './schedule-cron-options';
import { givenOptions } from './stacked-metadata';

const ON_TIMER_OPTIONS = ['timeout'] as const;
const DISTRIBUTED_CRON_OPTIONS = [
  'timeZone',
  'waitForCompletion',
  'disabled',
  'delivery',
  'timeout',
  ...CRON_POLICY_OPTIONS,
] as const;
/** @DistributedCron's, but `timeZone`: an interval's grid is counted in ms. */
const DISTRIBUTED_INTERVAL_OPTIONS = DISTRIBUTED_CRON_OPTIONS.filter((option) => option !== 'timeZone');

/**
 * The options of an `@OnTimer`, `@DistributedCron` or `@DistributedInterval` method, checked at boot: a field the decorator does
 * not know (a `timezone`, or `@nestjs/schedule`'s `utcOffset`, passed in a variable that TypeScript does
 * not check as a literal) is refused with a "did you mean", not ignored. `delivery` on `@OnTimer` is
 * refused with where it goes: it is each timer's.
 */
export function checkDecoratorOptions(
  owner: string,
  onTimers: readonly OnTimerMetadata[],
  crons: readonly DistributedCronMetadata[],
  intervals: readonly DistributedIntervalMetadata[] = [],
): void {
  for (const onTimer of onTimers) {
    const { name, ...rest } = onTimer;
    const options = givenOptions(onTimer) ?? rest;
    refuseTimerOwn(owner, name, options);
    check(OptionReader.of(`${owner} @OnTimer`, options, '{ timeout }'), undefined, ON_TIMER_OPTIONS);
  }
  for (const cron of crons) {
    const { kind: _kind, name, expression: _expression, ...rest } = cron;
    const read = OptionReader.of(`${owner} @DistributedCron`, givenOptions(cron) ?? rest, '{ timeZone, … }');
    if (read.given.tz !== undefined) {
      // a spec's name for it (timers.schedule({ cron, tz })): the decorator takes @Cron's
      throw read.refuse(
        'tz',
        "is the spec's name for the zone",
        "Rename tz to timeZone: @DistributedCron takes @nestjs/schedule's name.",
      );
    }
    check(read, cronKey(name), DISTRIBUTED_CRON_OPTIONS);
    checkRowSource(owner, cron);
  }
  for (const interval of intervals) {
    const { kind: _kind, name, every: _every, ...rest } = interval;
    const given = givenOptions(interval) ?? rest;
    check(
      OptionReader.of(`${owner} @DistributedInterval`, given, '{ delivery, … }'),
      intervalKey(name),
      DISTRIBUTED_INTERVAL_OPTIONS,
    );
    checkRowSource(owner, interval);
  }
}

/** `@Cron`'s options with what they become, then any other unknown field with a "did you mean". */
function check(read: OptionReader, row: string | undefined, known: readonly string[]): void {
  refuseScheduleOptions(read, row);
  read.only(known);
  for (const flag of ['disabled', 'waitForCompletion'] as const) {
    if (known.includes(flag)) switchOf(read, flag);
  }
}

/**
 * `disabled` and `waitForCompletion` were read as truthy: `disabled: process.env.DIGEST_OFF` (a cast)
 * of "false" removed the row, and `waitForCompletion: 'false'` waited.
 */
function switchOf(read: OptionReader, field: 'disabled' | 'waitForCompletion'): void {
  const value = read.given[field];
  if (value === undefined || typeof value === 'boolean') return;
  const fromText = typeof value === 'string' ? ` (a string is not read: "false" is truthy)` : '';
  throw read.refuse(
    field,
    `is not a boolean${fromText}`,
    `Write ${field} as true or false, e.g. ${field}: process.env.X === 'true', or leave it out.`,
  );
}

/** What each timer is given when it is scheduled, not its handler: an example of each, for the fix. */
const TIMER_OWN: Readonly<Record<string, string>> = {
  delivery: "delivery: 'at-most-once'",
  retry: "retry: { attempts: 3, backoff: { type: 'exponential', delay: '1s' } }",
  overlap: "overlap: 'skip'",
  pauseAfterFailures: 'pauseAfterFailures: 5',
  catchup: "catchup: 'skip'",
  catchupWindow: "catchupWindow: '1h'",
  jitter: "jitter: '30s'",
  startAt: "startAt: '2026-03-01T09:00:00Z'",
  endAt: "endAt: '2026-03-31T09:00:00Z'",
};

/**
 * A timer's own option given to `@OnTimer` (a `delivery`, a `retry`, BullMQ's `attempts` / `backoff` of a
 * `@Processor` moved here): refused with where it goes, rather than "the known fields are timeout" —
 * the handler's runs would not have had it. `@DistributedCron` takes them for its row.
 */
function refuseTimerOwn(owner: string, name: string, options: object): void {
  const where = `${owner}: @OnTimer('${name}') takes no`;
  for (const field of Object.keys(options)) {
    const bullmq = field === 'attempts' || field === 'backoff';
    const example = bullmq ? TIMER_OWN.retry : TIMER_OWN[field];
    if (example === undefined) continue;
    const why = bullmq
      ? `BullMQ's ${field} is retry.${field} of each timer, given when it is scheduled.`
      : `a timer's ${field} is its own, given when it is scheduled.`;
    throw refusals.invalid(
      field,
      `${where} ${field}: ${why}`,
      `Remove ${field} from @OnTimer and schedule the timers it runs with it: timers.schedule({ key, handler: '${name}', ${example}, … }) (@DistributedCron takes ${bullmq ? 'retry' : field} as an option).`,
    );
  }
}
