import fc from 'fast-check';
import { nextCronOccurrence, nextCronSlot, validateCron } from './cron';

/** The next `count` occurrences after `from`, as UTC ISO strings. */
function occurrences(expr: string, tz: string, from: string, count: number): string[] {
  const found: string[] = [];
  let after = Date.parse(from);
  for (let i = 0; i < count; i++) {
    after = nextCronOccurrence(expr, tz, after);
    found.push(new Date(after).toISOString());
  }
  return found;
}

/** Expected instants written as local wall time with the offset in force, shown as UTC ISO strings. */
const instants = (...local: string[]) => local.map((text) => new Date(Date.parse(text)).toISOString());

const refusal = (fields: Record<string, unknown>) =>
  expect.objectContaining({ reason: 'invalid', ...fields });

describe('nextCronOccurrence: fields', () => {
  it('reads five fields as minute hour day-of-month month day-of-week on the zone wall clock', () => {
    // Friday 2026-03-06; Toronto springs forward on Sunday 03-08, so Monday is at -04:00.
    expect(occurrences('0 7 * * MON-FRI', 'America/Toronto', '2026-03-06T08:00:00-05:00', 3)).toEqual(
      instants('2026-03-09T07:00:00-04:00', '2026-03-10T07:00:00-04:00', '2026-03-11T07:00:00-04:00'),
    );
    expect(occurrences('0 7 * * MON-FRI', 'Europe/Berlin', '2026-03-06T08:00:00+01:00', 2)).toEqual(
      instants('2026-03-09T07:00:00+01:00', '2026-03-10T07:00:00+01:00'),
    );
  });

  it('reads six fields as leading seconds', () => {
    expect(occurrences('30 0 12 * * *', 'America/Toronto', '2026-06-01T12:00:30-04:00', 2)).toEqual(
      instants('2026-06-02T12:00:30-04:00', '2026-06-03T12:00:30-04:00'),
    );
    expect(occurrences('*/20 * * * * *', 'Europe/Berlin', '2026-06-01T12:00:05+02:00', 3)).toEqual(
      instants('2026-06-01T12:00:20+02:00', '2026-06-01T12:00:40+02:00', '2026-06-01T12:01:00+02:00'),
    );
  });

  it('accepts month and weekday names in any case', () => {
    expect(occurrences('0 9 1 JAN,jul *', 'Europe/Berlin', '2026-03-01T00:00:00+01:00', 2)).toEqual(
      instants('2026-07-01T09:00:00+02:00', '2027-01-01T09:00:00+01:00'),
    );
    expect(occurrences('0 9 * * sat,SUN', 'America/Toronto', '2026-03-02T00:00:00-05:00', 2)).toEqual(
      instants('2026-03-07T09:00:00-05:00', '2026-03-08T09:00:00-04:00'),
    );
  });

  it('takes Sunday as 0 or 7', () => {
    const sundays = instants('2026-03-08T09:00:00-04:00', '2026-03-15T09:00:00-04:00');
    expect(occurrences('0 9 * * 0', 'America/Toronto', '2026-03-02T00:00:00-05:00', 2)).toEqual(sundays);
    expect(occurrences('0 9 * * 7', 'America/Toronto', '2026-03-02T00:00:00-05:00', 2)).toEqual(sundays);
    expect(occurrences('0 9 * * 7', 'Europe/Berlin', '2026-03-02T00:00:00+01:00', 1)).toEqual(
      instants('2026-03-08T09:00:00+01:00'),
    );
  });

  it('runs on a day matching either day field when both are restricted', () => {
    // Fridays, and the 13th whatever its weekday: Monday 2026-04-13 runs too.
    expect(occurrences('0 9 13 * FRI', 'Europe/Berlin', '2026-03-01T00:00:00+01:00', 8)).toEqual(
      instants(
        '2026-03-06T09:00:00+01:00',
        '2026-03-13T09:00:00+01:00',
        '2026-03-20T09:00:00+01:00',
        '2026-03-27T09:00:00+01:00',
        '2026-04-03T09:00:00+02:00',
        '2026-04-10T09:00:00+02:00',
        '2026-04-13T09:00:00+02:00',
        '2026-04-17T09:00:00+02:00',
      ),
    );
    expect(occurrences('0 9 13 * FRI', 'America/Toronto', '2026-04-01T00:00:00-04:00', 4)).toEqual(
      instants(
        '2026-04-03T09:00:00-04:00',
        '2026-04-10T09:00:00-04:00',
        '2026-04-13T09:00:00-04:00',
        '2026-04-17T09:00:00-04:00',
      ),
    );
  });

  it('understands the predefined @-expressions and the L and # extensions', () => {
    expect(occurrences('@daily', 'Europe/Berlin', '2026-03-28T12:00:00+01:00', 2)).toEqual(
      instants('2026-03-29T00:00:00+01:00', '2026-03-30T00:00:00+02:00'),
    );
    expect(occurrences('0 12 L * *', 'America/Toronto', '2026-02-01T00:00:00-05:00', 2)).toEqual(
      instants('2026-02-28T12:00:00-05:00', '2026-03-31T12:00:00-04:00'),
    );
    expect(occurrences('0 12 * * FRI#3', 'Europe/Berlin', '2026-03-01T00:00:00+01:00', 2)).toEqual(
      instants('2026-03-20T12:00:00+01:00', '2026-04-17T12:00:00+02:00'),
    );
  });

  it('finds February 29 in whatever year it occurs', () => {
    expect(occurrences('0 0 29 2 *', 'America/Toronto', '2026-01-01T00:00:00-05:00', 2)).toEqual(
      instants('2028-02-29T00:00:00-05:00', '2032-02-29T00:00:00-05:00'),
    );
    expect(occurrences('0 0 29 2 *', 'Europe/Berlin', '2028-02-29T00:00:00+01:00', 1)).toEqual(
      instants('2032-02-29T00:00:00+01:00'),
    );
  });

  it('returns the first occurrence strictly after the given instant', () => {
    const slot = Date.parse('2026-06-01T09:00:00+02:00');
    expect(nextCronOccurrence('0 9 * * *', 'Europe/Berlin', slot - 1)).toBe(slot);
    expect(nextCronOccurrence('0 9 * * *', 'Europe/Berlin', slot)).toBe(slot + 86_400_000);
    expect(nextCronOccurrence('* * * * * *', 'Europe/Berlin', slot + 0.5)).toBe(slot + 1000);
  });
});

describe('nextCronOccurrence: daylight saving time', () => {
  it('does not run a wall time that a spring-forward skips, that day only', () => {
    expect(occurrences('30 2 * * *', 'America/Toronto', '2026-03-07T00:00:00-05:00', 2)).toEqual(
      instants('2026-03-07T02:30:00-05:00', '2026-03-09T02:30:00-04:00'),
    );
    expect(occurrences('30 2 * * *', 'Europe/Berlin', '2026-03-28T00:00:00+01:00', 2)).toEqual(
      instants('2026-03-28T02:30:00+01:00', '2026-03-30T02:30:00+02:00'),
    );
  });

  it('keeps hourly and half-hourly crons on the wall clock across a spring-forward', () => {
    expect(occurrences('0 * * * *', 'America/Toronto', '2026-03-08T00:30:00-05:00', 3)).toEqual(
      instants('2026-03-08T01:00:00-05:00', '2026-03-08T03:00:00-04:00', '2026-03-08T04:00:00-04:00'),
    );
    expect(occurrences('*/30 * * * *', 'Europe/Berlin', '2026-03-29T01:00:00+01:00', 3)).toEqual(
      instants('2026-03-29T01:30:00+01:00', '2026-03-29T03:00:00+02:00', '2026-03-29T03:30:00+02:00'),
    );
  });

  it('runs a wall time that a fall-back repeats twice', () => {
    expect(occurrences('30 1 * * *', 'America/Toronto', '2026-10-31T12:00:00-04:00', 3)).toEqual(
      instants('2026-11-01T01:30:00-04:00', '2026-11-01T01:30:00-05:00', '2026-11-02T01:30:00-05:00'),
    );
    expect(occurrences('30 2 * * *', 'Europe/Berlin', '2026-10-24T12:00:00+02:00', 3)).toEqual(
      instants('2026-10-25T02:30:00+02:00', '2026-10-25T02:30:00+01:00', '2026-10-26T02:30:00+01:00'),
    );
  });

  it('runs the repeated hour of a half-hourly cron twice', () => {
    expect(occurrences('*/30 * * * *', 'America/Toronto', '2026-11-01T00:45:00-04:00', 5)).toEqual(
      instants(
        '2026-11-01T01:00:00-04:00',
        '2026-11-01T01:30:00-04:00',
        '2026-11-01T01:00:00-05:00',
        '2026-11-01T01:30:00-05:00',
        '2026-11-01T02:00:00-05:00',
      ),
    );
    expect(occurrences('*/30 * * * *', 'Europe/Berlin', '2026-10-25T01:45:00+02:00', 5)).toEqual(
      instants(
        '2026-10-25T02:00:00+02:00',
        '2026-10-25T02:30:00+02:00',
        '2026-10-25T02:00:00+01:00',
        '2026-10-25T02:30:00+01:00',
        '2026-10-25T03:00:00+01:00',
      ),
    );
  });

  it('continues from the pass it starts in during a repeated hour', () => {
    expect(occurrences('* * * * *', 'America/Toronto', '2026-11-01T01:58:00-04:00', 3)).toEqual(
      instants('2026-11-01T01:59:00-04:00', '2026-11-01T01:00:00-05:00', '2026-11-01T01:01:00-05:00'),
    );
    expect(occurrences('*/30 * * * *', 'America/Toronto', '2026-11-01T01:15:00-05:00', 1)).toEqual(
      instants('2026-11-01T01:30:00-05:00'),
    );
  });

  it('handles the 30-minute shifts of Australia/Lord_Howe', () => {
    // Spring forward on 2026-10-04: 02:00 +10:30 becomes 02:30 +11:00, so only 02:45 exists that day.
    expect(occurrences('15,45 2 * * *', 'Australia/Lord_Howe', '2026-10-03T12:00:00+10:30', 3)).toEqual(
      instants('2026-10-04T02:45:00+11:00', '2026-10-05T02:15:00+11:00', '2026-10-05T02:45:00+11:00'),
    );
    // Fall back on 2026-04-05: 02:00 +11:00 becomes 01:30 +10:30, so 01:45 happens twice.
    expect(occurrences('45 1 * * *', 'Australia/Lord_Howe', '2026-04-04T12:00:00+11:00', 3)).toEqual(
      instants('2026-04-05T01:45:00+11:00', '2026-04-05T01:45:00+10:30', '2026-04-06T01:45:00+10:30'),
    );
  });
});

const ZONES = ['America/Toronto', 'Europe/Berlin', 'Asia/Kolkata', 'Australia/Lord_Howe'];

describe('nextCronOccurrence: expressions users write', () => {
  // Each expression runs exactly when its plain spelling does, in every zone, from both DST seasons.
  it.each([
    ['0 9 * * 0,7', '0 9 * * 0'],
    ['0,*/15 * * * *', '*/15 * * * *'],
    ['0 9 * * MON-FRI,WED', '0 9 * * 1-5'],
    ['0 9 1,1,15 * *', '0 9 1,15 * *'],
    ['0 9 * * 1,1-3,MON,tue', '0 9 * * 1-3'],
    ['0 10 * * SAT-SUN', '0 10 * * 0,6'],
    ['0 10 * * sat-sun', '0 10 * * 0,6'],
    ['0 10 * * FRI-SUN', '0 10 * * 0,5,6'],
    ['0 10 * * FRI-MON', '0 10 * * 0,1,5,6'],
    ['0 10 * * 6-0', '0 10 * * 0,6'],
    ['0 10 * * 6-7', '0 10 * * 0,6'],
    ['0 10 * * 5-1', '0 10 * * 0,1,5,6'],
    ['0 10 * * FRI-MON/2', '0 10 * * 0,5'],
    ['0 10 * * 7-2', '0 10 * * 0-2'],
    ['0 8 1 NOV-FEB *', '0 8 1 1,2,11,12 *'],
    ['0 8 1 11-2/3 *', '0 8 1 2,11 *'],
    ['@DAILY', '0 0 * * *'],
    [' @daily ', '0 0 * * *'],
    ['@Weekly', '0 0 * * 0'],
    ['@midnight', '0 0 * * *'],
    ['@weekdays', '0 0 * * MON-FRI'],
    ['  0  9 * *   MON  ', '0 9 * * 1'],
    ['0 9 ? * MON', '0 9 * * 1'],
    // @nestjs/schedule's CronExpression spellings (README "Coming from @nestjs/schedule"): EVERY_MINUTE,
    // EVERY_5_MINUTES, EVERY_HOUR, EVERY_DAY_AT_1AM, EVERY_WEEKEND, EVERY_30_MINUTES_BETWEEN_9AM_AND_5PM,
    // MONDAY_TO_FRIDAY_AT_09_30AM.
    ['*/1 * * * *', '* * * * *'],
    ['0 */5 * * * *', '*/5 * * * *'],
    ['0 0-23/1 * * *', '0 * * * *'],
    ['0 01 * * *', '0 1 * * *'],
    ['0 0 * * 6,0', '0 0 * * 0,6'],
    ['0 */30 9-17 * * *', '*/30 9-17 * * *'],
    ['0 30 09 * * 1-5', '30 9 * * 1-5'],
  ])('reads %j as %j', (expr, plain) => {
    for (const tz of ZONES) {
      for (const from of ['2026-02-20T00:00:00Z', '2026-09-25T00:00:00Z']) {
        expect(occurrences(expr, tz, from, 12)).toEqual(occurrences(plain, tz, from, 12));
      }
    }
  });

  it.each(ZONES)('pins the first slots of the wrap-around and repeated forms in %s', (tz) => {
    // 2026-03-06 is a Friday.
    const from = Date.parse('2026-03-05T12:00:00Z');
    const weekendDays = occurrences('0 0 * * SAT-SUN', tz, new Date(from).toISOString(), 3);
    expect(weekendDays.map((iso) => new Date(iso).getTime())).toEqual([
      nextCronOccurrence('0 0 7 3 *', tz, from),
      nextCronOccurrence('0 0 8 3 *', tz, from),
      nextCronOccurrence('0 0 14 3 *', tz, from),
    ]);
  });

  it('runs the k-th and the last such weekday of the month, listed together', () => {
    expect(occurrences('0 12 * * FRI#2,FRI#4,MONL', 'Europe/Berlin', '2026-03-01T00:00:00+01:00', 4)).toEqual(
      instants(
        '2026-03-13T12:00:00+01:00',
        '2026-03-27T12:00:00+01:00',
        '2026-03-30T12:00:00+02:00',
        '2026-04-10T12:00:00+02:00',
      ),
    );
  });

  it('takes a day field as restricted unless it is * (or ?): */2 and 1-31 are restricted', () => {
    // Odd days and Mondays: Monday 2026-06-08 runs although the 8th is even.
    const mondaysAndOddDays = instants(
      '2026-06-05T09:00:00+02:00',
      '2026-06-07T09:00:00+02:00',
      '2026-06-08T09:00:00+02:00',
      '2026-06-09T09:00:00+02:00',
      '2026-06-11T09:00:00+02:00',
    );
    expect(occurrences('0 9 */2 * MON', 'Europe/Berlin', '2026-06-04T12:00:00+02:00', 5)).toEqual(
      mondaysAndOddDays,
    );
    // Every day of the month restricted, so any day runs, Mondays or not.
    expect(occurrences('0 9 1-31 * MON', 'Europe/Berlin', '2026-06-04T12:00:00+02:00', 2)).toEqual(
      instants('2026-06-05T09:00:00+02:00', '2026-06-06T09:00:00+02:00'),
    );
    // `*` leaves the weekday to decide alone; so does `?`.
    for (const day of ['*', '?']) {
      expect(occurrences(`0 9 ${day} * MON`, 'Europe/Berlin', '2026-06-04T12:00:00+02:00', 2)).toEqual(
        instants('2026-06-08T09:00:00+02:00', '2026-06-15T09:00:00+02:00'),
      );
    }
    expect(occurrences('0 9 */2 * *', 'Europe/Berlin', '2026-06-04T12:00:00+02:00', 2)).toEqual(
      instants('2026-06-05T09:00:00+02:00', '2026-06-07T09:00:00+02:00'),
    );
  });
});

describe('nextCronSlot: the next slot of a live cron', () => {
  it('searches as far as the next slot is, where new specs stop at 4 years', () => {
    const leapDay2096 = Date.parse('2096-02-29T00:00:00-05:00');
    expect(() => nextCronOccurrence('0 0 29 2 *', 'America/Toronto', leapDay2096)).toThrow(
      refusal({ field: 'cron', message: expect.stringMatching(/does not occur in the 4 years/) }),
    );
    expect(nextCronSlot('0 0 29 2 *', 'America/Toronto', leapDay2096)).toBe(
      Date.parse('2104-02-29T00:00:00-05:00'),
    );
    // A fifth Monday in February next comes in 2044.
    expect(nextCronSlot('0 0 * 2 MON#5', 'Europe/Berlin', Date.parse('2026-01-01T00:00:00Z'))).toBe(
      Date.parse('2044-02-29T00:00:00+01:00'),
    );
    expect(nextCronSlot('0 9 * * *', 'UTC', Date.parse('2026-06-01T10:00:00Z'))).toBe(
      Date.parse('2026-06-02T09:00:00Z'),
    );
  });

  it('answers null when no slot comes before the last instant a Date holds', () => {
    const lastLeapDay = Date.UTC(275760, 1, 29);
    expect(nextCronSlot('0 0 29 2 *', 'UTC', lastLeapDay - 1)).toBe(lastLeapDay);
    expect(nextCronSlot('0 0 29 2 *', 'UTC', lastLeapDay)).toBeNull();
    const torontoLastLeapDay = Date.parse('+275760-02-29T00:00:00-05:00');
    expect(nextCronSlot('0 0 29 2 *', 'America/Toronto', lastLeapDay)).toBe(torontoLastLeapDay);
    expect(nextCronSlot('0 0 29 2 *', 'America/Toronto', torontoLastLeapDay)).toBeNull();
  });

  it('refuses what validateCron refuses', () => {
    expect(() => nextCronSlot('0 0 30 2 *', 'UTC', Date.now())).toThrow(refusal({ field: 'cron' }));
    expect(() => nextCronSlot('0 0 * * *', 'Nowhere/Land', Date.now())).toThrow(refusal({ field: 'tz' }));
  });
});

describe('nextCronOccurrence: against a brute-force scan', () => {
  it('agrees with a minute-by-minute read of the zone clock on random expressions, DST days included', () => {
    const transitions = [
      '2026-03-08T07:00:00Z',
      '2026-11-01T06:00:00Z',
      '2026-03-29T01:00:00Z',
      '2026-10-25T01:00:00Z',
      '2026-04-04T15:00:00Z',
      '2026-10-03T15:30:00Z',
      '2027-02-20T03:00:00Z',
    ].map(Date.parse);
    const expression = fc.tuple(
      fc.constantFrom('0', '30', '*/15', '0,*/15', '5,45,5', '0-10/5,50-59/5', '59', '*'),
      fc.constantFrom('*', '0-3', '1,2,3,2', '*/2', '9', '22-23,0-1', '2', '1'),
      fc.constantFrom('*', '*', '*/2', '1-15', '1,15,15', '28-31', '2-31/3'),
      fc.constantFrom('*', '*', 'NOV-FEB', '3,10,3,11', 'MAR-MAY', 'OCT-APR/2', '2-10'),
      fc.constantFrom(
        '*',
        '*',
        'SAT-SUN',
        'FRI-MON',
        '0,7',
        'MON-FRI,WED',
        '6-0',
        '5-1',
        '1-5/2',
        'sun',
        'FRI-MON/2',
      ),
    );
    fc.assert(
      fc.property(
        expression,
        fc.constantFrom(...ZONES, 'America/Sao_Paulo', 'America/Santiago', 'UTC'),
        fc.constantFrom(...transitions),
        fc.integer({ min: -4 * 24 * 60, max: 36 * 60 }),
        (fields, tz, transition, shiftMinutes) => {
          const after = transition + shiftMinutes * 60_000 + 17_000;
          const expr = fields.join(' ');
          const window = 5 * 86_400_000;
          const expected = scanExpression(fields, tz, after, after + window);
          const found = nextCronOccurrence(expr, tz, after);
          if (expected === null) expect(found).toBeGreaterThan(after + window);
          else expect(found).toBe(expected);
        },
      ),
      { numRuns: 120 },
    );
  });
});

/**
 * Oracle for five-field expressions: reads each minute's wall clock through Intl and matches it with
 * a reading of the fields written for this test (wrap-around in month and weekday, 7 = Sunday).
 */
function scanExpression(fields: string[], tz: string, after: number, until: number): number | null {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: tz,
    hourCycle: 'h23',
    month: 'numeric',
    day: 'numeric',
    weekday: 'short',
    hour: 'numeric',
    minute: 'numeric',
  });
  const [minute, hour, day, month, weekday] = fields;
  const names = {
    SUN: 0,
    MON: 1,
    TUE: 2,
    WED: 3,
    THU: 4,
    FRI: 5,
    SAT: 6,
    JAN: 1,
    FEB: 2,
    MAR: 3,
    APR: 4,
    MAY: 5,
    JUN: 6,
    JUL: 7,
    AUG: 8,
    SEP: 9,
    OCT: 10,
    NOV: 11,
    DEC: 12,
  };
  const number = (text: string) => names[text.toUpperCase() as keyof typeof names] ?? Number(text);
  const allows = (field: string, value: number, low: number, high: number): boolean =>
    field.split(',').some((item) => {
      const [range, stepText = '1'] = item.split('/');
      const [from, to] =
        range === '*'
          ? [low, high]
          : range.includes('-')
            ? range.split('-').map(number)
            : [number(range), number(range)];
      const cycle = high - low + 1;
      const span = (((to - from) % cycle) + cycle) % cycle;
      const offset = (((value - from) % cycle) + cycle) % cycle;
      return offset <= span && offset % Number(stepText) === 0;
    });
  for (let t = Math.floor(after / 60_000) * 60_000 + 60_000; t <= until; t += 60_000) {
    const parts = Object.fromEntries(format.formatToParts(t).map(({ type, value }) => [type, value]));
    const dayOfWeek = number(parts.weekday);
    const byDay = allows(day, +parts.day, 1, 31);
    const byWeekday = allows(weekday.replace(/7/g, '0'), dayOfWeek, 0, 6);
    const dayOk = day !== '*' && weekday !== '*' ? byDay || byWeekday : byDay && byWeekday;
    if (
      allows(minute, +parts.minute, 0, 59) &&
      allows(hour, +parts.hour, 0, 23) &&
      allows(month, +parts.month, 1, 12) &&
      dayOk
    ) {
      return t;
    }
  }
  return null;
}

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
