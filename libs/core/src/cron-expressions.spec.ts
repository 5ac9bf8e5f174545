import { nextCronOccurrence, nextCronSlot } from './cron';
import { instants, occurrences, refusal, ZONES } from '../../../test/engine/cron-cases';

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

  it('concludes "no slot in 400 years" from a few thousand zone reads, not 400 years read whole', () => {
    // The second Sunday of March at 02:30 is in Chicago's spring-forward gap every year, and an hour
    // written as a range (`2-2`) does not run a time the clock skips (§3.3): no slot.
    // Reading each of the 400 years took ~170,000 Intl reads (1.2 s of event loop, 3.6 s on a busy host).
    const reads = jest.spyOn(Intl.DateTimeFormat.prototype, 'formatToParts');
    try {
      const after = Date.parse('2026-01-01T00:00:00Z');
      expect(nextCronSlot('30 2-2 * 3 SUN#2', 'America/Chicago', after)).toBeNull();
      expect(reads.mock.calls.length).toBeLessThan(20_000);
      // Just outside the gap it runs, on the day of the change and the years after; a fixed 02:30 at the gap's end.
      expect(nextCronSlot('30 3 * 3 SUN#2', 'America/Chicago', after)).toBe(
        Date.parse('2026-03-08T03:30:00-05:00'),
      );
      expect(nextCronSlot('30 2 * 3 SUN#2', 'America/Chicago', after)).toBe(
        Date.parse('2026-03-08T03:00:00-05:00'),
      );
      expect(nextCronSlot('30 2 * 3 SUN#2', 'Asia/Tokyo', after)).toBe(
        Date.parse('2026-03-08T02:30:00+09:00'),
      );
    } finally {
      reads.mockRestore();
    }
  });

  it('refuses what validateCron refuses', () => {
    expect(() => nextCronSlot('0 0 30 2 *', 'UTC', Date.now())).toThrow(refusal({ field: 'cron' }));
    expect(() => nextCronSlot('0 0 * * *', 'Nowhere/Land', Date.now())).toThrow(refusal({ field: 'tz' }));
  });
});
