import { occurrences } from '../../../test/engine/cron-cases';

/**
 * Where Sundial's occurrences differ from those of `@nestjs/schedule` (its `cron` package 4.4) or croner 9
 * and 10, pinned (docs/spec.md §3.3 "Versus @nestjs/schedule"), and the DST cases where they used to and
 * now agree (a fixed time runs once). Representative cases of a differential check of random expressions
 * near the DST changes of seven zones: each row says what the other reader gives, and Sundial's answer
 * is by the rules of §3.3.
 */
const CASES: [why: string, expression: string, tz: string, from: string, next: string[]][] = [
  [
    'a fall-back repeats 01:30: a fixed time runs once, at its first pass (as cron and croner)',
    '30 1 * * *',
    'America/Toronto',
    '2026-11-01T04:00:00Z',
    ['2026-11-01T05:30:00Z', '2026-11-02T06:30:00Z', '2026-11-03T06:30:00Z'],
  ],
  [
    'a spring-forward skips 02:30: a fixed time runs at the gap end, 03:00 EDT (as cron)',
    '30 2 * * *',
    'America/Toronto',
    '2026-03-07T12:00:00Z',
    ['2026-03-08T07:00:00Z', '2026-03-09T06:30:00Z', '2026-03-10T06:30:00Z'],
  ],
  [
    'a fall-back at midnight repeats 23:00 Saturday: once (as cron)',
    '0 23 * * *',
    'America/Santiago',
    '2027-04-03T23:00:00Z',
    ['2027-04-04T02:00:00Z', '2027-04-05T03:00:00Z', '2027-04-06T03:00:00Z'],
  ],
  [
    'an hour step runs the repeated 02:00 twice (cron: once, 00:00Z)',
    '0 */2 * * *',
    'Europe/Berlin',
    '2026-10-24T22:30:00Z',
    ['2026-10-25T00:00:00Z', '2026-10-25T01:00:00Z', '2026-10-25T03:00:00Z'],
  ],
  [
    'an hour * does not run 02:30, which a spring-forward skips (cron: at the gap end, 07:00Z)',
    '30 * * * *',
    'America/Toronto',
    '2026-03-08T06:00:00Z',
    ['2026-03-08T06:30:00Z', '2026-03-08T07:30:00Z', '2026-03-08T08:30:00Z'],
  ],
  [
    '03:00 CET, not the fall-back instant when the clock reads 02:00 (cron: 01:00Z)',
    '0 3 * * *',
    'Europe/Berlin',
    '2026-10-24T12:00:00Z',
    ['2026-10-25T02:00:00Z', '2026-10-26T02:00:00Z', '2026-10-27T02:00:00Z'],
  ],
  [
    '00:00 Sunday after the clock went back to 23:00 Saturday (cron: 03:00Z)',
    '@weekends',
    'America/Santiago',
    '2027-04-04T02:53:57Z',
    ['2027-04-04T04:00:00Z', '2027-04-10T04:00:00Z', '2027-04-11T04:00:00Z'],
  ],
  [
    '02:15 once, after the half-hour fall-back (cron: also 15:15Z, when the clock reads 01:45)',
    '15 2 * * *',
    'Australia/Lord_Howe',
    '2027-04-03T13:00:00Z',
    ['2027-04-03T15:45:00Z', '2027-04-04T15:45:00Z', '2027-04-05T15:45:00Z'],
  ],
  [
    '02:22 is in the half-hour gap, 02:46 is not (cron: 15:22Z, when the clock reads 01:52)',
    '* 22/24 * * * *',
    'Australia/Lord_Howe',
    '2028-09-30T15:21:05Z',
    ['2028-09-30T15:46:00Z', '2028-09-30T15:46:01Z', '2028-09-30T15:46:02Z'],
  ],
  [
    '03:45-03:59 exist after the 02:45 spring-forward (cron skips them, and runs 14:15Z, when the clock reads 04:00)',
    '* 3/6 * * *',
    'Pacific/Chatham',
    '2027-09-25T12:32:00Z',
    ['2027-09-25T14:00:00Z', '2027-09-25T14:01:00Z', '2027-09-25T14:02:00Z'],
  ],
  [
    '02:45 is the first skipped minute: run at the gap end, 14:00Z (as cron and croner)',
    '45 2 * * *',
    'Pacific/Chatham',
    '2027-09-25T12:00:00Z',
    ['2027-09-25T14:00:00Z', '2027-09-26T13:00:00Z', '2027-09-27T13:00:00Z'],
  ],
  [
    'inside the repeated hour, forward from the second pass (cron: 13:57Z, before the instant asked from)',
    '1-46/41 * * * *',
    'Pacific/Chatham',
    '2025-04-05T14:16:00Z',
    ['2025-04-05T14:57:00Z', '2025-04-05T15:16:00Z', '2025-04-05T15:57:00Z'],
  ],
  [
    '1-31 is restricted: either day field, so every day (cron: Mondays)',
    '0 0 1-31 * MON',
    'UTC',
    '2026-12-05T00:00:00Z',
    ['2026-12-06T00:00:00Z', '2026-12-07T00:00:00Z', '2026-12-08T00:00:00Z'],
  ],
  [
    '*/1 in day-of-week is restricted: every day (cron: the 15th)',
    '0 0 15 * */1',
    'UTC',
    '2026-12-05T00:00:00Z',
    ['2026-12-06T00:00:00Z', '2026-12-07T00:00:00Z', '2026-12-08T00:00:00Z'],
  ],
  [
    '3/4 runs to 7: Wednesday and Sunday, as cron reads it (croner: Wednesdays)',
    '0 9 * * 3/4',
    'UTC',
    '2026-12-05T00:00:00Z',
    ['2026-12-06T09:00:00Z', '2026-12-09T09:00:00Z', '2026-12-13T09:00:00Z'],
  ],
  [
    '0-SUN is Sunday to Sunday, as cron reads it (croner: every day)',
    '0 9 * * 0-SUN',
    'UTC',
    '2026-12-05T00:00:00Z',
    ['2026-12-06T09:00:00Z', '2026-12-13T09:00:00Z', '2026-12-20T09:00:00Z'],
  ],
];

describe('nextCronOccurrence: where readers users migrate from differ', () => {
  it.each(CASES)('%s: %s in %s from %s', (_why, expression, tz, from, next) => {
    const expected = next.map((at) => new Date(at).toISOString());
    expect(occurrences(expression, tz, from, next.length)).toEqual(expected);
  });
});
