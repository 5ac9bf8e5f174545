import { duration, scheduleText, toMs } from './duration';

const refusal = (fields: Record<string, unknown>) =>
  expect.objectContaining({ reason: 'invalid', ...fields });

describe('duration', () => {
  it.each([
    ['250ms', 250],
    ['90s', 90_000],
    ['10m', 600_000],
    ['1.5h', 5_400_000],
    ['14d', 1_209_600_000],
    ['0ms', 0],
    ['.5s', 500],
    ['1.1h', 3_960_000],
    ['0.0004s', 0],
    ['1.0006s', 1_001],
  ])('reads %s as %d ms', (text, ms) => {
    expect(duration(text)).toBe(ms);
  });

  it.each([
    ['1hr', '"1h"'],
    ['90sec', '"90s"'],
    ['10 min', '"10m"'],
    [' 10s', '"10s"'],
    ['2w', '"14d"'],
    ['3 days', '"3d"'],
    ['10M', '"10m"'],
    ['1.5 H', '"1.5h"'],
    ['500msec', '"500ms"'],
  ])('refuses %j and suggests %s', (text, suggestion) => {
    expect(() => duration(text)).toThrow(
      refusal({
        field: 'duration',
        message: `duration ${JSON.stringify(text)} is not a duration`,
        fix: `Write duration as ${suggestion}.`,
      }),
    );
  });

  it.each(['', '10', 'ms', '-5s', '1e3ms', '1h30m', 'Infinityd', '1..5h', '5 parsecs'])(
    'refuses %j and explains the format',
    (text) => {
      expect(() => duration(text)).toThrow(
        refusal({
          field: 'duration',
          fix: expect.stringMatching(
            /^Write duration as a non-negative number followed by one of ms, s, m, h, d/,
          ),
        }),
      );
    },
  );

  it('refuses a length no millisecond count can hold', () => {
    expect(() => duration('99999999999999999999d')).toThrow(
      refusal({ field: 'duration', message: expect.stringContaining('too long') }),
    );
  });

  it('refuses a non-string from untyped callers', () => {
    expect(() => duration(42 as unknown as string)).toThrow(refusal({ field: 'duration' }));
  });
});

describe('toMs', () => {
  it('takes numbers as milliseconds, rounded to whole ones, leaving the sign to the caller', () => {
    expect(toMs(1500, 'delay')).toBe(1500);
    expect(toMs(0, 'delay')).toBe(0);
    expect(toMs(2.6, 'every')).toBe(3);
    expect(toMs(-5, 'delay')).toBe(-5);
  });

  it('reads strings as durations', () => {
    expect(toMs('1.5h', 'every')).toBe(5_400_000);
  });

  it('names the given field in its errors', () => {
    expect(() => toMs('1hr', 'every')).toThrow(
      refusal({ field: 'every', message: 'every "1hr" is not a duration', fix: 'Write every as "1h".' }),
    );
  });

  it.each([NaN, Infinity, -Infinity, true, null, {}, [5]])('refuses %p', (value) => {
    expect(() => toMs(value as number, 'delay')).toThrow(
      refusal({ field: 'delay', fix: expect.stringContaining('number of milliseconds') }),
    );
  });
});

describe('scheduleText: the schedule in words of the CLI and the operator UI', () => {
  it.each([
    [{ cron: '0 7 * * 1-5', tz: 'America/Toronto' }, 'cron 0 7 * * 1-5 (America/Toronto)'],
    [{ cron: '0 7 * * *' }, 'cron 0 7 * * *'],
    [{ everyMs: 30_000 }, 'every 30 s'],
    [{ everyMs: 300 }, 'every 300 ms'],
    [{}, 'once'],
  ])('%p reads %p', (timer, text) => {
    expect(scheduleText(timer)).toBe(text);
  });
});
