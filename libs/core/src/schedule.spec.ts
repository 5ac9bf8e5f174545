import fc from 'fast-check';
import { afterCronRun, firstDue, gridSkips, nextGridSlot } from './schedule';
import type { NormalizedSpec } from './types';

const now = Date.parse('2026-03-01T12:00:00Z');

function spec(schedule: Partial<NormalizedSpec>): NormalizedSpec {
  return {
    key: 'k',
    handler: 'h',
    payload: null,
    kind: 'once',
    awaitTask: true,
    removeOnComplete: true,
    ifExists: 'error',
    delivery: 'at-least-once',
    ...schedule,
  };
}

describe('firstDue', () => {
  it('is now + delay for a relative one-shot', () => {
    expect(firstDue(spec({ kind: 'once', delayMs: 5000 }), now)).toBe(now + 5000);
    expect(firstDue(spec({ kind: 'once', delayMs: 0 }), now)).toBe(now);
  });

  it('is the requested instant for an absolute one-shot, even one already past', () => {
    expect(firstDue(spec({ kind: 'once', atMs: now + 60_000 }), now)).toBe(now + 60_000);
    expect(firstDue(spec({ kind: 'once', atMs: now - 60_000 }), now)).toBe(now - 60_000);
  });

  it('is one interval after creation for an interval', () => {
    expect(firstDue(spec({ kind: 'interval', everyMs: 30_000 }), now)).toBe(now + 30_000);
  });

  it('is the next cron slot strictly after now, on the zone wall clock', () => {
    const cron = spec({ kind: 'cron', cron: '0 7 * * *', tz: 'America/Toronto' });
    expect(firstDue(cron, now)).toBe(Date.parse('2026-03-02T07:00:00-05:00'));
    const slot = Date.parse('2026-03-02T07:00:00-05:00');
    expect(firstDue(cron, slot)).toBe(Date.parse('2026-03-03T07:00:00-05:00'));
  });

  it('refuses a spec that lacks its kind’s schedule field (a programming error)', () => {
    expect(() => firstDue(spec({ kind: 'interval' }), now)).toThrow(/lacks everyMs/);
  });
});

describe('nextGridSlot', () => {
  const anchor = Date.parse('2026-03-01T00:00:00Z');
  const hour = 3_600_000;

  it('is the first slot after the anchor when now is before it', () => {
    expect(nextGridSlot(anchor, hour, anchor)).toBe(anchor + hour);
    expect(nextGridSlot(anchor, hour, anchor + 1)).toBe(anchor + hour);
    expect(nextGridSlot(anchor, hour, anchor - 5 * hour)).toBe(anchor + hour);
  });

  it('skips a slot that is exactly now: due strictly after now', () => {
    expect(nextGridSlot(anchor, hour, anchor + hour)).toBe(anchor + 2 * hour);
  });

  it('makes nothing up after a week-long outage: one slot, the next on the grid', () => {
    expect(nextGridSlot(anchor, hour, anchor + 7 * 24 * hour + 17 * 60_000)).toBe(
      anchor + (7 * 24 + 1) * hour,
    );
  });

  it('always lands on the grid, strictly after now, less than one interval later', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 42 }),
        fc.integer({ min: 1, max: 2 ** 31 }),
        fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
        (start, every, elapsed) => {
          const slot = nextGridSlot(start, every, start + elapsed);
          const k = (slot - start) / every;
          expect(Number.isInteger(k) && k >= 1).toBe(true);
          expect(slot).toBeGreaterThan(start + elapsed);
          expect(k === 1 || slot - every <= start + elapsed).toBe(true);
        },
      ),
    );
  });
});

describe('slots gone past (docs/spec.md §3.3)', () => {
  const due = Date.parse('2026-06-01T00:00:00Z');

  it('afterCronRun splits the slots after due at the run start: missed before, overlap after', () => {
    expect(afterCronRun('* * * * * *', 'UTC', due, due + 2500, due + 4500)).toEqual({
      next: due + 5000,
      missed: 2,
      overlap: 2,
      firstMissed: due + 1000,
      firstOverlap: due + 3000,
    });
    expect(afterCronRun('* * * * * *', 'UTC', due, due, due + 500)).toEqual({
      next: due + 1000,
      missed: 0,
      overlap: 0,
    });
  });

  // It counted up to 1000 slots in all (MAX_SKIPPED): an hour of a per-second cron said 1000, not 3600.
  it('afterCronRun counts every slot gone past, however many', () => {
    const end = afterCronRun('* * * * * *', 'UTC', due, due + 600_000, due + 3_600_000);
    expect(end).toEqual({
      next: due + 3_601_000,
      missed: 600,
      overlap: 3_000,
      firstMissed: due + 1_000,
      firstOverlap: due + 601_000,
    });
  });

  it('gridSkips counts the grid slots strictly between due and next, split at the start', () => {
    // anchor 0, every 10: due 10, started 35 (20, 30 missed), next 50 (40 overlapped)
    expect(gridSkips(0, 10, 10, 35, 50)).toEqual({
      missed: 2,
      overlap: 1,
      firstMissed: 20,
      firstOverlap: 40,
    });
    expect(gridSkips(0, 10, 10, 10, 20)).toEqual({ missed: 0, overlap: 0 });
    // a slot exactly at the start passed before it: missed
    expect(gridSkips(0, 10, 10, 40, 50)).toEqual({ missed: 3, overlap: 0, firstMissed: 20 });
    // an off-grid due (rescheduled): only later grid slots count
    expect(gridSkips(0, 10, 13, 13, 30)).toEqual({ missed: 0, overlap: 1, firstOverlap: 20 });
  });
});
