import { nextCronOccurrence } from './cron';
import { instants, occurrences } from '../../../test/engine/cron-cases';

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

  // §3.3: where clocks change at midnight the spring-forward day has no 00:00 (Santiago: 2026-09-06 00:00
  // -04:00 is 01:00 -03:00); a day a zone skipped whole has no slots (Apia moved across the date line)
  it.each([
    [
      '0 0 * * *',
      'America/Santiago',
      '2026-09-04T12:00:00-04:00',
      '2026-09-05T00:00:00-04:00 2026-09-07T00:00:00-03:00',
    ],
    [
      '0 1 * * *',
      'America/Santiago',
      '2026-09-04T12:00:00-04:00',
      '2026-09-05T01:00:00-04:00 2026-09-06T01:00:00-03:00',
    ],
    [
      '0 0 * * *',
      'Pacific/Apia',
      '2011-12-28T12:00:00-10:00',
      '2011-12-29T00:00:00-10:00 2011-12-31T00:00:00+14:00',
    ],
  ])('%s in %s from %s: a day without that wall time has no slot', (expr, tz, from, expected) => {
    const walls = expected.split(' ');
    expect(occurrences(expr, tz, from, walls.length)).toEqual(instants(...walls));
  });
});
