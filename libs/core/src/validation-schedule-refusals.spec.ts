import { normalizeSpec, normalizeWhen } from './validation';
import {
  base,
  type Expected,
  expectSpecRefused,
  once,
  refusalOf,
} from '../../../test/engine/validation-cases';

/** The rows of docs/spec.md §2's validation table about the schedule: delay, at, every, cron, tz, maxRuns. */
const refusals: [string, unknown, Expected][] = [
  // the schedule: exactly one of delay, at, every, cron
  [
    'no schedule at all',
    base,
    { field: undefined, message: /none of delay, at, every, cron/, fix: /exactly one/ },
  ],
  ['delay and every', { ...base, delay: '1m', every: '1m' }, { field: 'every', message: /delay and every/ }],
  [
    'at, every and cron',
    { ...base, at: 0, every: '1m', cron: '* * * * *' },
    { field: 'every', fix: /^Keep only one of at, every and cron: / },
  ],
  [
    'cron without tz',
    { ...base, cron: '0 7 * * *' },
    { field: 'tz', message: /no tz/, fix: /America\/Toronto/ },
  ],
  ['tz without cron', { ...once, tz: 'UTC' }, { field: 'tz', fix: 'Remove tz: it only applies to cron.' }],
  [
    'an unknown zone',
    { ...base, cron: '0 7 * * *', tz: 'Europe/Berlim' },
    { field: 'tz', fix: /"Europe\/Berlin"/ },
  ],
  [
    'a cron that does not parse',
    { ...base, cron: '0 7 * *', tz: 'UTC' },
    { field: 'cron', message: /4 fields/ },
  ],
  [
    'a cron that is not a string',
    { ...base, cron: 7, tz: 'UTC' },
    { field: 'cron', message: 'cron 7 is not a string' },
  ],
  [
    'a cron that never occurs',
    { ...base, cron: '0 0 30 2 *', tz: 'UTC' },
    { field: 'cron', message: /never occurs/ },
  ],
  [
    'a cron not in 4 years',
    { ...base, cron: '0 0 * 2 MON#5', tz: 'UTC' },
    { field: 'cron', message: /4 years/ },
  ],
  // delay and every
  [
    'a delay that is NaN',
    { ...base, delay: NaN },
    {
      field: 'delay',
      message: 'delay must be a finite number of milliseconds or a duration string, got NaN',
    },
  ],
  ['an infinite delay', { ...base, delay: Infinity }, { field: 'delay', message: /Infinity/ }],
  ['a negative delay', { ...base, delay: -1 }, { field: 'delay', message: 'delay -1 is negative' }],
  ['a delay with a unit typo', { ...base, delay: '1hr' }, { field: 'delay', fix: 'Write delay as "1h".' }],
  ['a delay that is a boolean', { ...base, delay: true }, { field: 'delay', message: /got true/ }],
  ['an infinite every', { ...base, every: -Infinity }, { field: 'every', message: /-Infinity/ }],
  ['a zero every', { ...base, every: 0 }, { field: 'every', message: 'every 0 is not positive' }],
  ['a negative every', { ...base, every: -1000 }, { field: 'every', message: /not positive/ }],
  ['every "0s"', { ...base, every: '0s' }, { field: 'every', message: /not positive/ }],
  [
    'every below the minimum',
    { ...base, every: 50 },
    { field: 'every', message: /minimum interval of 100 ms/, fix: /at least 100/ },
  ],
  ['every "99ms"', { ...base, every: '99ms' }, { field: 'every', fix: /"100ms"/ }],
  // at
  [
    'an ISO at without zone',
    { ...base, at: '2026-03-01T09:00:00' },
    { field: 'at', message: /no zone offset/, fix: /"2026-03-01T09:00:00Z"/ },
  ],
  ['a date-only at', { ...base, at: '2026-03-01' }, { field: 'at', fix: /"2026-03-01T00:00:00Z"/ }],
  [
    'an unparsable at',
    { ...base, at: 'tomorrow' },
    { field: 'at', message: 'at "tomorrow" is not a point in time' },
  ],
  [
    'an at on February 30',
    { ...base, at: '2026-02-30T09:00:00Z' },
    { field: 'at', message: /not a point in time/ },
  ],
  ['an at at 24:00', { ...base, at: '2026-03-01T24:00:00Z' }, { field: 'at' }],
  ['an at with offset +25:00', { ...base, at: '2026-03-01T09:00:00+25:00' }, { field: 'at' }],
  [
    'a non-finite numeric at',
    { ...base, at: NaN },
    { field: 'at', message: 'at NaN is not a point in time' },
  ],
  ['a negative numeric at', { ...base, at: -1 }, { field: 'at' }],
  ['an at beyond what a Date holds', { ...base, at: 9e15 }, { field: 'at' }],
  ['an at that is an object', { ...base, at: {} }, { field: 'at', message: /an object/ }],
  // maxRuns
  [
    'maxRuns 0',
    { ...base, every: '1m', maxRuns: 0 },
    { field: 'maxRuns', message: 'maxRuns 0 is not a positive integer' },
  ],
  ['maxRuns -2', { ...base, every: '1m', maxRuns: -2 }, { field: 'maxRuns' }],
  ['maxRuns 1.5', { ...base, every: '1m', maxRuns: 1.5 }, { field: 'maxRuns' }],
  ['maxRuns "3"', { ...base, every: '1m', maxRuns: '3' }, { field: 'maxRuns', message: /"3"/ }],
  ['maxRuns Infinity', { ...base, every: '1m', maxRuns: Infinity }, { field: 'maxRuns' }],
  ['maxRuns on a one-shot', { ...once, maxRuns: 2 }, { field: 'maxRuns', fix: /Remove maxRuns/ }],
];

describe('normalizeSpec refuses', () => {
  it.each(refusals)('%s', (_name, spec, expected) => expectSpecRefused(spec, expected));
});

/** Defect 9 of issue 8: a delay or interval has an upper bound, so every due time is a real date. */
describe('delay and every have an upper bound', () => {
  const CENTURY_MS = 100 * 365.25 * 86_400_000;

  it.each([
    ['delay', 1e20],
    ['delay', Number.MAX_SAFE_INTEGER],
    ['delay', CENTURY_MS + 1],
    ['delay', '36525.5d'],
    ['every', 1e20],
    ['every', '40000d'],
  ])('refuses %s %p as invalid, naming the bound', (field, value) => {
    const refusal = refusalOf(() => normalizeSpec({ ...base, [field]: value }));
    expect(refusal).toMatchObject({ reason: 'invalid', field, fix: expect.stringContaining('100 years') });
  });

  it('refuses a reschedule delay beyond the bound too', () => {
    expect(refusalOf(() => normalizeWhen({ delay: 1e20 }))).toMatchObject({
      reason: 'invalid',
      field: 'delay',
    });
  });

  it('accepts exactly the bound, which keeps the due a valid date', () => {
    expect(normalizeSpec({ ...base, delay: CENTURY_MS }).delayMs).toBe(CENTURY_MS);
    expect(normalizeSpec({ ...base, every: '36525d' }).everyMs).toBe(CENTURY_MS);
    expect(new Date(Date.now() + CENTURY_MS).toISOString()).toMatch(/^21\d\d-/);
  });
});
