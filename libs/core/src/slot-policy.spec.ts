import { normalizeSpec } from './validation';
import { backfillSlots, dueOfSlot, jitterOf, lateSlot, slotAfterRun, type SlotTimer } from './slot-policy';

const HOUR = 3_600_000;
const T = Date.parse('2026-03-01T00:00:00Z');
const hourly = (policy: Partial<SlotTimer> = {}): SlotTimer => ({
  key: 'k',
  kind: 'interval',
  scheduledAt: T,
  everyMs: HOUR,
  ...policy,
});

describe('slot policy validation', () => {
  const base = { key: 'k', handler: 'h', every: '1h' };

  it('normalizes durations and instants to ms and leaves the default catchup out', () => {
    expect(
      normalizeSpec({
        ...base,
        catchup: 'once',
        catchupWindow: '6h',
        jitter: '30s',
        startAt: '2026-03-01T00:00:00Z',
        endAt: T + HOUR,
      }),
    ).toMatchObject({ catchupWindow: 6 * HOUR, jitter: 30_000, startAt: T, endAt: T + HOUR });
    expect(normalizeSpec({ ...base, catchup: 'once' }).catchup).toBeUndefined();
    expect(normalizeSpec({ ...base, catchup: 'all' }).catchup).toBe('all');
  });

  it.each([
    [{ delay: '1m', every: undefined, jitter: '1s' }, 'jitter', /every or cron/],
    [{ catchup: 'sometimes' }, 'catchup', /"skip"/],
    [{ catchupWindow: '0s' }, 'catchupWindow', /positive duration/],
    [{ jitter: '1h' }, 'jitter', /shorter than every/],
    [{ jitter: '2d', every: undefined, cron: '0 0 * * *', tz: 'UTC' }, 'jitter', /at most 1 day/],
    [{ startAt: '2026-03-01T00:00:00' }, 'startAt', /offset/],
    [{ startAt: T + HOUR, endAt: T }, 'endAt', /after startAt/],
    [{ catchup: 'all', awaitTask: false }, 'catchup', /awaitTask/],
  ])('refuses %j with field %s and a fix', (extra, field, fix) => {
    const attempt = () => normalizeSpec({ ...base, ...extra });
    expect(attempt).toThrow(
      expect.objectContaining({ reason: 'invalid', field, fix: expect.stringMatching(fix) }),
    );
  });
});

describe('slot rules', () => {
  it('jitter is in [0, jitter), deterministic per key and slot, and never early', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 500; i++) {
      const offset = jitterOf(`key:${i}`, T + i * HOUR, 60_000);
      expect(offset).toBeGreaterThanOrEqual(0);
      expect(offset).toBeLessThan(60_000);
      expect(jitterOf(`key:${i}`, T + i * HOUR, 60_000)).toBe(offset);
      seen.add(offset);
    }
    expect(seen.size).toBeGreaterThan(400);
    expect(dueOfSlot({ key: 'k' }, T)).toBe(T);
  });

  it("a wake 10 hours late: 'once' runs, 'skip' passes the 10 slots, a window passes the old ones", () => {
    const now = T + 10 * HOUR;
    expect(lateSlot(hourly(), T + HOUR, now)).toBeNull();
    expect(lateSlot(hourly({ catchup: 'skip' }), T + HOUR, now)).toEqual({
      next: T + 11 * HOUR,
      missed: 10,
      overlap: 0,
      firstMissed: T + HOUR,
    });
    // a skip slot claimed before its successor came runs, however late
    expect(lateSlot(hourly({ catchup: 'skip' }), T + HOUR, T + 2 * HOUR - 1)).toBeNull();
    expect(lateSlot(hourly({ catchupWindow: 3 * HOUR }), T + HOUR, now)).toMatchObject({
      next: T + 7 * HOUR,
      missed: 6,
    });
    expect(lateSlot(hourly({ catchup: 'skip', endAt: T + 5 * HOUR }), T + HOUR, now)).toMatchObject({
      next: null,
      ended: 'ended',
    });
  });

  it("after a run: 'all' takes the next slot while it was due at the start, else the first after now", () => {
    const all = hourly({ catchup: 'all' });
    expect(slotAfterRun(all, T + HOUR, T + 10 * HOUR, T + 10 * HOUR)).toEqual({
      next: T + 2 * HOUR,
      missed: 0,
      overlap: 0,
    });
    expect(slotAfterRun(all, T + 10 * HOUR, T + 10 * HOUR, T + 10 * HOUR).next).toBe(T + 11 * HOUR);
    // outside the default 1-day window: the old slots are passed, counted missed
    expect(slotAfterRun(all, T + HOUR, T + 30 * HOUR, T + 30 * HOUR)).toMatchObject({
      next: T + 6 * HOUR,
      missed: 4,
    });
    // 'once': the slots gone past, split at the start, as gridSkips counts them
    expect(slotAfterRun(hourly({ jitter: 1 }), T + HOUR, T + 3.5 * HOUR, T + 5.5 * HOUR)).toEqual({
      next: T + 6 * HOUR,
      missed: 2,
      overlap: 2,
      firstMissed: T + 2 * HOUR,
      firstOverlap: T + 4 * HOUR,
    });
  });

  it('backfill slots reach back before the anchor, in order, and refuse a range over 1000 slots', () => {
    expect(backfillSlots(hourly(), T - 2 * HOUR, T, T + HOUR)).toEqual([T - 2 * HOUR, T - HOUR, T]);
    expect(backfillSlots(hourly(), T - 30 * 60_000, T - 1, T)).toEqual([]);
    expect(() => backfillSlots(hourly(), T - 2000 * HOUR, T, T)).toThrow(
      expect.objectContaining({ field: 'range' }),
    );
    const cron: SlotTimer = { key: 'c', kind: 'cron', scheduledAt: T, cron: '0 9 * * *', tz: 'Europe/Paris' };
    expect(backfillSlots(cron, T - 2 * 24 * HOUR, T, T).map((slot) => new Date(slot).toISOString())).toEqual([
      '2026-02-27T08:00:00.000Z',
      '2026-02-28T08:00:00.000Z',
    ]);
  });

  it("catchup 'skip' runs a late slot whose successor is after endAt: it is the timer's last", () => {
    const late = T + 3.5 * HOUR;
    expect(lateSlot(hourly({ catchup: 'skip', endAt: T + 2.5 * HOUR }), T + 2 * HOUR, late)).toBeNull();
    const cron: SlotTimer = { key: 'c', kind: 'cron', scheduledAt: T, cron: '0 * * * *', tz: 'UTC' };
    expect(lateSlot({ ...cron, catchup: 'skip', endAt: T + 2.5 * HOUR }, T + 2 * HOUR, late)).toBeNull();
    // a successor up to endAt came: passed as before
    expect(lateSlot(hourly({ catchup: 'skip', endAt: T + 3 * HOUR }), T + 2 * HOUR, late)).toMatchObject({
      missed: 2,
      next: null,
      ended: 'ended',
    });
  });

  it('backfill runs no slot after endAt, and refuses a range that starts after it', () => {
    const ending = hourly({ endAt: T + 2.5 * HOUR });
    expect(backfillSlots(ending, T, T + 5 * HOUR, T + 6 * HOUR)).toEqual([T, T + HOUR, T + 2 * HOUR]);
    expect(() => backfillSlots(ending, T + 3 * HOUR, T + 5 * HOUR, T + 6 * HOUR)).toThrow(
      expect.objectContaining({
        reason: 'invalid',
        field: 'range',
        message: expect.stringMatching(/after endAt/),
      }),
    );
  });

  it('a backfill and catch-up all take the slots of a fall-back as §3.3 reads the cron', () => {
    const cron: SlotTimer = {
      key: 'c',
      kind: 'cron',
      scheduledAt: T,
      cron: '30 1 * * *',
      tz: 'America/Toronto',
    };
    const [from, to, now] = ['2026-11-01T04:00:00Z', '2026-11-01T07:00:00Z', '2026-11-02T00:00:00Z'].map(
      Date.parse,
    );
    const first = Date.parse('2026-11-01T05:30:00Z');
    // a fixed 01:30 runs once, at its first pass; with the hour a range it runs on both passes
    expect(backfillSlots(cron, from, to, now)).toEqual([first]);
    const range = { ...cron, cron: '30 1-1 * * *' };
    expect(backfillSlots(range, from, to, now)).toEqual([first, first + HOUR]);
    const all = { ...range, catchup: 'all' as const, catchupWindow: 24 * HOUR };
    expect(slotAfterRun(all, first, now - HOUR, now).next).toBe(first + HOUR);
  });

  // A cron's slots were counted up to 1000 (MAX_SKIPPED): a day of a per-minute cron said 1000, not 1440.
  it("a cron late by a day counts every slot it passes: catchup 'skip' and a window alike", () => {
    const minutely: SlotTimer = { key: 'c', kind: 'cron', scheduledAt: T, cron: '* * * * *', tz: 'UTC' };
    const now = T + 24 * HOUR + 30_000;
    expect(lateSlot({ ...minutely, catchup: 'skip' }, T, now)).toMatchObject({
      next: T + 24 * HOUR + 60_000,
      missed: 24 * 60 + 1,
      firstMissed: T,
    });
    expect(lateSlot({ ...minutely, catchupWindow: HOUR }, T, now)).toMatchObject({ missed: 23 * 60 + 1 });
    expect(slotAfterRun({ ...minutely, endAt: T + 48 * HOUR }, T, now - HOUR, now)).toMatchObject({
      missed: 23 * 60,
      overlap: 60,
    });
  });
});
