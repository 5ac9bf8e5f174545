import { cronSlotCount, nextCronSlot } from '@sundial/core';
import { seededRandom } from './harness';

/** The slots in (after, upTo] one by one, as the runs counted them (up to `cap`). */
function iterated(expr: string, tz: string, after: number, upTo: number, cap = 20_000): number {
  let count = 0;
  for (
    let slot = nextCronSlot(expr, tz, after);
    slot !== null && slot <= upTo;
    slot = nextCronSlot(expr, tz, slot)
  ) {
    if (++count > cap) throw new Error('range too wide to iterate');
  }
  return count;
}

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** Zones with DST gaps and overlaps, half-hour and 45-minute offsets, and none. */
const ZONES = [
  'UTC',
  'Europe/Berlin',
  'America/New_York',
  'Australia/Lord_Howe',
  'Pacific/Chatham',
  'Asia/Gaza',
];
const EXPRESSIONS = [
  '* * * * * *',
  '*/7 * * * * *',
  '0 * * * *',
  '30 1 * * *',
  '0 2 * * *',
  '*/15 1-3 * * *',
  '*/20 2,3 * * *',
  '15,45 2 * * *',
  '* 1 * * *',
  '*/10 * 2 * * *',
  '0 0 L * *',
  '0 9 * * MON-FRI',
  '0 0 13 * FRI',
  '15,45 */2 * * 0,7',
  '0 3 * * SUN#2',
  '0 0 29 2 *',
  '5 4 * NOV-FEB 5L',
];
/** Instants around DST changes of several years (the 2026 ones in Europe and America among them). */
const AROUND = [
  Date.UTC(2026, 2, 8, 6),
  Date.UTC(2026, 2, 29, 0),
  Date.UTC(2026, 9, 25, 0),
  Date.UTC(2026, 10, 1, 5),
  Date.UTC(2027, 3, 4, 15),
];

describe('cronSlotCount: the slots of (after, upTo], counted without walking them', () => {
  it('is what walking them one by one counts, around DST changes, in every kind of zone', () => {
    const below = seededRandom(20261207);
    const random = () => below(1_000_000) / 1_000_000;
    for (let i = 0; i < 400; i++) {
      const expr = EXPRESSIONS[Math.floor(random() * EXPRESSIONS.length)];
      const tz = ZONES[Math.floor(random() * ZONES.length)];
      const perSecond = expr.split(' ').length === 6 && !expr.startsWith('0 ');
      const span = (perSecond ? 2 * HOUR : 40 * DAY) * random();
      const after =
        AROUND[Math.floor(random() * AROUND.length)] - span / 2 + Math.floor(random() * 2000) - 1000;
      const upTo = after + span;
      expect([expr, tz, after, upTo, cronSlotCount(expr, tz, after, upTo)]).toEqual([
        expr,
        tz,
        after,
        upTo,
        iterated(expr, tz, after, upTo),
      ]);
    }
  });

  it('bounds: after itself is out, upTo in; an empty or backwards range counts 0', () => {
    const at = Date.UTC(2026, 0, 1);
    expect(cronSlotCount('* * * * * *', 'UTC', at, at + 3_000)).toBe(3);
    expect(cronSlotCount('* * * * * *', 'UTC', at - 1, at)).toBe(1);
    expect(cronSlotCount('* * * * * *', 'UTC', at, at + 999)).toBe(0);
    expect(cronSlotCount('* * * * * *', 'UTC', at, at)).toBe(0);
    expect(cronSlotCount('* * * * * *', 'UTC', at, at - DAY)).toBe(0);
  });

  it('a fixed time counts once across a DST change; with an hour range, none in a gap and two in an overlap', () => {
    // Europe/Berlin: 2026-03-29 02:00-03:00 does not exist; 2026-10-25 02:00-03:00 occurs twice
    const [spring, fall] = [Date.UTC(2026, 2, 28), Date.UTC(2026, 9, 24)];
    expect(cronSlotCount('30 2 * * *', 'Europe/Berlin', spring, spring + 2 * DAY)).toBe(2);
    expect(cronSlotCount('30 2 * * *', 'Europe/Berlin', fall, fall + 2 * DAY)).toBe(2);
    expect(cronSlotCount('30 2-2 * * *', 'Europe/Berlin', spring, spring + 2 * DAY)).toBe(1);
    expect(cronSlotCount('30 2-2 * * *', 'Europe/Berlin', fall, fall + 2 * DAY)).toBe(3);
    // the gap's 02:00, 02:20 and 02:40 and 03:00 itself are one slot at 03:00, then 03:20 and 03:40
    expect(cronSlotCount('*/20 2,3 * * *', 'Europe/Berlin', spring + DAY, spring + 2 * DAY - 1)).toBe(3);
  });

  it('counts a week of a per-second cron exactly: every slot, not up to a cap', () => {
    const at = Date.UTC(2026, 0, 1);
    expect(cronSlotCount('* * * * * *', 'UTC', at, at + 7 * DAY)).toBe(7 * 86_400);
    expect(cronSlotCount('* * * * *', 'America/New_York', at, at + 366 * DAY)).toBe(366 * 1440);
  });
});
