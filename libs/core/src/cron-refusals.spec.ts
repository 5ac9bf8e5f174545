import { nextCronOccurrence, validateCron } from './cron';
import { refusal } from '../../../test/engine/cron-cases';

describe('validateCron and refusals', () => {
  it('accepts expressions that occur', () => {
    expect(() => validateCron('0 7 * * MON-FRI', 'America/Toronto')).not.toThrow();
    expect(() => validateCron('0 0 29 2 *', 'Europe/Berlin')).not.toThrow();
  });

  it.each([
    ['0 0 30 2 *', /never occurs/],
    ['0 0 31 4,6 *', /never occurs/],
    ['0 0 * 2 MON#5', /does not occur in the 4 years after/],
  ])('refuses %j, which cannot occur within 4 years', (expr, message) => {
    expect(() => validateCron(expr, 'Europe/Berlin')).toThrow(
      refusal({
        field: 'cron',
        message: expect.stringMatching(message),
        fix: expect.stringMatching(/^Write /),
      }),
    );
    expect(() => nextCronOccurrence(expr, 'America/Toronto', Date.parse('2026-01-01T00:00:00Z'))).toThrow(
      refusal({ field: 'cron' }),
    );
  });

  // US clocks spring forward at 02:00 on the second Sunday of March: 02:30 then never shows
  it('says so when every time it names falls in a daylight-saving gap of its zone and its hour is a range or step', () => {
    for (const expr of ['30 2-2 * 3 SUN#2', '*/10 2/24 * 3 SUN#2']) {
      expect(() => validateCron(expr, 'America/New_York')).toThrow(
        refusal({
          field: 'cron',
          message: expect.stringMatching(
            /in America\/New_York: each time it names falls in a daylight-saving gap there, which the clock skips, and its hour is a range or step/,
          ),
          fix: expect.stringMatching(
            /Write the hour as one value .*, or a wall time the clock shows on those days/,
          ),
        }),
      );
      expect(() => validateCron(expr, 'UTC')).not.toThrow();
    }
  });

  // §3.3: a fixed time (its hour written as a value) the clock skips runs at the gap's end, 03:00 EDT
  it('accepts a fixed time that falls in a gap every time: it runs at the gap end', () => {
    const after = Date.parse('2026-01-01T00:00:00Z');
    for (const expr of ['30 2 * 3 SUN#2', '*/10 2 * 3 SUN#2']) {
      expect(() => validateCron(expr, 'America/New_York')).not.toThrow();
      expect(nextCronOccurrence(expr, 'America/New_York', after)).toBe(
        Date.parse('2026-03-08T03:00:00-04:00'),
      );
    }
  });

  it.each([
    ['* * *', 'it has 3 fields'],
    ['', 'it has 0 fields'],
    ['   ', 'it has 0 fields'],
    ['* * * * * * *', 'it has 7 fields'],
    ['61 * * * *', '61'],
    ['0 24 * * *', '24'],
    ['0 0 * * FOO', 'FOO'],
    ['0 0 * * 8', '8'],
    ['*/0 * * * *', 'step'],
    ['*/x * * * *', 'step'],
    ['1-2-3 * * * *', '1-2-3'],
    ['0 0 * * MON-FRI#2', 'MON-FRI'],
    ['0 0 * JUN-FOO *', 'FOO'],
    ['0 0 32 * *', '32'],
    ['0 0 0 * *', '0'],
    ['0 0 * 13 *', '13'],
    ['0 0 1, * *', '""'],
  ])('refuses %j, which does not parse', (expr, detail) => {
    expect(() => validateCron(expr, 'UTC')).toThrow(
      refusal({
        field: 'cron',
        message: expect.stringContaining(`cron ${JSON.stringify(expr)} is not a valid cron expression`),
        fix: expect.stringContaining('minute hour day-of-month month day-of-week'),
      }),
    );
    expect(() => validateCron(expr, 'UTC')).toThrow(
      expect.objectContaining({ message: expect.stringContaining(detail) }),
    );
  });

  it.each([
    ['5-1 * * * *', 'minute', '"5-59,0-1"'],
    ['0 22-2 * * FRI', 'hour', '"22-23,0-2"'],
    ['0 0 25-5 * *', 'day-of-month', '"25-31,1-5"'],
    ['50-10 * * * * *', 'second', '"50-59,0-10"'],
  ])('refuses the backwards range in %j, which would not wrap into the next unit', (expr, field, ranges) => {
    expect(() => validateCron(expr, 'UTC')).toThrow(
      refusal({
        field: 'cron',
        message: expect.stringMatching(new RegExp(`runs backwards: a ${field} range does not wrap`)),
        fix: `Write it as two ranges, ${ranges}.`,
      }),
    );
  });

  it.each([
    ['@fortnightly', /"@fortnightly" is not a known macro/, /@yearly, @annually, @monthly/],
    ['0 0 * * L', /"L" needs a weekday before it/, /FRIL/],
    ['0 0 * * MON#6', /"#6" must be #1 to #5/, /MON#2/],
  ])('refuses %j with its own fix', (expr, message, fix) => {
    expect(() => validateCron(expr, 'UTC')).toThrow(
      refusal({ field: 'cron', message: expect.stringMatching(message), fix: expect.stringMatching(fix) }),
    );
  });

  it('refuses H, whose random value would move the schedule on every re-arm', () => {
    expect(() => validateCron('H * * * *', 'UTC')).toThrow(
      refusal({ field: 'cron', fix: 'Write the value itself, e.g. "17 * * * *".' }),
    );
    expect(() => validateCron('0 0 * * THU', 'UTC')).not.toThrow();
  });

  it('refuses an unknown zone, suggesting the closest name', () => {
    expect(() => validateCron('0 7 * * *', 'America/Torronto')).toThrow(
      refusal({
        field: 'tz',
        message: 'tz "America/Torronto" is not a known IANA time zone',
        fix: 'Did you mean "America/Toronto"? Write tz as an IANA zone name.',
      }),
    );
    for (const tz of ['Mars/Olympus_Mons', '', '+05:00', '\u221205:00', 'A'.repeat(10_000)]) {
      expect(() => validateCron('0 7 * * *', tz)).toThrow(
        refusal({ field: 'tz', fix: expect.stringMatching(/IANA/) }),
      );
    }
  });

  it('checks the zone before the expression', () => {
    expect(() => validateCron('nonsense', 'Nowhere/Land')).toThrow(refusal({ field: 'tz' }));
  });

  it('refuses non-strings from untyped callers', () => {
    expect(() => validateCron(5 as unknown as string, 'UTC')).toThrow(refusal({ field: 'cron' }));
    expect(() => validateCron('0 7 * * *', undefined as unknown as string)).toThrow(refusal({ field: 'tz' }));
  });
});
