import fc from 'fast-check';
import { nextCronOccurrence } from './cron';
import { ZONES } from '../../../test/engine/cron-cases';

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
 * a reading of the fields written for this test (wrap-around in month and weekday, 7 = Sunday). An hour
 * written as values is a fixed time (§3.3): it runs at the first minute whose clock reads it or past it,
 * so the clock is read from two days before `after` to know which wall times it already showed.
 */
function scanExpression(fields: string[], tz: string, after: number, until: number): number | null {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone: tz,
    hourCycle: 'h23',
    year: 'numeric',
    month: 'numeric',
    day: 'numeric',
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
  const matches = (wall: number): boolean => {
    const date = new Date(wall);
    const byDay = allows(day, date.getUTCDate(), 1, 31);
    const byWeekday = allows(weekday.replace(/7/g, '0'), date.getUTCDay(), 0, 6);
    const dayOk = day !== '*' && weekday !== '*' ? byDay || byWeekday : byDay && byWeekday;
    return (
      allows(minute, date.getUTCMinutes(), 0, 59) &&
      allows(hour, date.getUTCHours(), 0, 23) &&
      allows(month, date.getUTCMonth() + 1, 1, 12) &&
      dayOk
    );
  };
  const fixed = hour.split(',').every((item) => /^\d+$/.test(item));
  let shown = -Infinity;
  for (let t = Math.floor(after / 60_000) * 60_000 - 2 * 86_400_000; t <= until; t += 60_000) {
    const parts = Object.fromEntries(format.formatToParts(t).map(({ type, value }) => [type, value]));
    const wall = Date.UTC(+parts.year, +parts.month - 1, +parts.day, +parts.hour, +parts.minute);
    // the wall minutes this minute reads or jumps past, for a fixed time; else the one it reads
    const first = fixed && shown !== -Infinity ? shown + 60_000 : wall;
    let runs = false;
    for (let m = first; m <= wall && !runs; m += 60_000) runs = matches(m);
    shown = Math.max(shown, wall);
    if (t > after && runs) return t;
  }
  return null;
}
