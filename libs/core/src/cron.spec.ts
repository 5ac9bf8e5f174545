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
  const [TO, BE, LH] = ['America/Toronto', 'Europe/Berlin', 'Australia/Lord_Howe'];
  /** "MM-DD HH:MM±hh HH:MM±hh MM-DD HH:MM±hh…": wall times of 2026 with their offset, a date until the next. */
  const walls = (text: string) => {
    let date = '';
    const times: string[] = [];
    for (const word of text.split(' ')) {
      if (/^\d\d-\d\d$/.test(word)) date = word;
      else times.push(`2026-${date}T${word.replace(/([+-]\d\d)$/, '$1:00')}`);
    }
    return instants(...times);
  };

  // §3.3: an hour written as one value or a list of values is a fixed time; `*`, a range or a step is not.
  // Toronto springs forward on 2026-03-08 (02:00 EST → 03:00 EDT) and falls back on 2026-11-01 (02:00 EDT
  // → 01:00 EST); Berlin on 2026-03-29 (02:00 CET → 03:00 CEST) and 2026-10-25 (03:00 CEST → 02:00 CET).
  it.each([
    // a fixed time a spring-forward skips runs once, at the end of the gap
    ['30 2 * * *', TO, '03-07 00:00-05', '03-07 02:30-05 03-08 03:00-04 03-09 02:30-04'],
    ['30 2 * * *', BE, '03-28 00:00+01', '03-28 02:30+01 03-29 03:00+02 03-30 02:30+02'],
    // every time of the gap, and 03:00 itself, make one run at 03:00
    ['*/20 2,3 * * *', TO, '03-08 01:00-05', '03-08 03:00-04 03:20-04 03:40-04'],
    // with the hour *, a range or a step, not at all
    ['30 2-3 * * *', TO, '03-08 00:00-05', '03-08 03:30-04 03-09 02:30-04'],
    ['0 * * * *', TO, '03-08 00:30-05', '03-08 01:00-05 03:00-04 04:00-04'],
    ['*/30 * * * *', BE, '03-29 01:00+01', '03-29 01:30+01 03:00+02 03:30+02'],
    // a fixed time a fall-back repeats runs once, at its first occurrence
    ['30 1 * * *', TO, '10-31 12:00-04', '11-01 01:30-04 11-02 01:30-05'],
    ['30 2 * * *', BE, '10-24 12:00+02', '10-25 02:30+02 10-26 02:30+01'],
    ['*/20 1,13 * * *', TO, '11-01 00:30-04', '11-01 01:00-04 01:20-04 01:40-04 13:00-05'],
    // ... and not again from inside the repeated hour: it ran in the first pass
    ['30 1 * * *', TO, '11-01 01:15-05', '11-02 01:30-05'],
    ['0 2 * * *', BE, '10-25 02:00+01', '10-26 02:00+01'],
    // with the hour *, a range or a step, on both passes
    ['*/30 * * * *', TO, '11-01 00:45-04', '11-01 01:00-04 01:30-04 01:00-05 01:30-05 02:00-05'],
    ['*/30 * * * *', BE, '10-25 01:45+02', '10-25 02:00+02 02:30+02 02:00+01 02:30+01 03:00+01'],
    ['30 1-2 * * *', TO, '10-31 12:00-04', '11-01 01:30-04 01:30-05 02:30-05'],
    // ... going on from the pass it starts in
    ['* * * * *', TO, '11-01 01:58-04', '11-01 01:59-04 01:00-05 01:01-05'],
    ['*/30 * * * *', TO, '11-01 01:15-05', '11-01 01:30-05'],
    // Lord Howe springs forward on 2026-10-04 (02:00 +10:30 → 02:30 +11:00): 02:15 runs at 02:30
    ['15,45 2 * * *', LH, '10-03 12:00+10:30', '10-04 02:30+11 02:45+11 10-05 02:15+11 02:45+11'],
    // and falls back on 2026-04-05 (02:00 +11:00 → 01:30 +10:30): 01:45 shows twice
    ['45 1 * * *', LH, '04-04 12:00+11', '04-05 01:45+11 04-06 01:45+10:30'],
    ['45 */1 * * *', LH, '04-05 01:00+11', '04-05 01:45+11 01:45+10:30 02:45+10:30'],
  ])('%s in %s from %s', (expr, tz, from, expected) => {
    const [start] = walls(from);
    expect(occurrences(expr, tz, start, walls(expected).length)).toEqual(walls(expected));
  });

  // §3.3: where clocks change at midnight the spring-forward day has no 00:00 (Santiago: 2026-09-06 00:00
  // -04:00 is 01:00 -03:00): a fixed 00:00 runs at 01:00, an hour step skips it; a day a zone skipped
  // whole has no slots of its own (Apia moved across the date line: its 30th's 00:00 and the 31st's are one).
  it.each([
    [
      '0 0 * * *',
      'America/Santiago',
      '2026-09-04T12:00:00-04:00',
      '2026-09-05T00:00:00-04:00 2026-09-06T01:00:00-03:00 2026-09-07T00:00:00-03:00',
    ],
    [
      '0 0/12 * * *',
      'America/Santiago',
      '2026-09-05T06:00:00-04:00',
      '2026-09-05T12:00:00-04:00 2026-09-06T12:00:00-03:00',
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
      '2011-12-29T00:00:00-10:00 2011-12-31T00:00:00+14:00 2012-01-01T00:00:00+14:00',
    ],
  ])('%s in %s from %s: a day without that wall time', (expr, tz, from, expected) => {
    const walls = expected.split(' ');
    expect(occurrences(expr, tz, from, walls.length)).toEqual(instants(...walls));
  });

  it('finds the end of a gap when the search starts just before it, not when it starts on it', () => {
    const gapEnd = Date.parse('2026-03-08T03:00:00-04:00');
    expect(nextCronOccurrence('30 2 * * *', 'America/Toronto', gapEnd - 1)).toBe(gapEnd);
    expect(nextCronOccurrence('30 2 * * *', 'America/Toronto', gapEnd)).toBe(
      Date.parse('2026-03-09T02:30:00-04:00'),
    );
  });
});
