/*
 * docs/spec.md §3.3c: a cron's jitter must be shorter than the shortest gap between two of its slots in
 * a row, read in its zone over a year from its start — DST changes included, as the slots take them (§3.3).
 */
import { createEngine } from './engine';
import { shortestCronGap } from './cron-gap';
import { nextCronSlot } from './cron';
import { normalizeSpec } from './validation';
import { VirtualClock } from './virtual-clock';

const [SECOND, MINUTE, HOUR, DAY] = [1000, 60_000, 3_600_000, 86_400_000];
const T = Date.parse('2026-01-15T12:00:00Z');

describe('shortestCronGap', () => {
  it.each([
    ['* * * * *', 'UTC', MINUTE],
    ['*/5 * * * * *', 'UTC', 5 * SECOND],
    ['0,30 * * * *', 'UTC', 30 * MINUTE],
    ['0,45 9,10 * * *', 'UTC', 15 * MINUTE],
    ['0 9 * * 1-5', 'UTC', DAY], // Monday to Tuesday, not Friday to Monday
    ['0 9 * * 1-5', 'Asia/Tokyo', DAY],
    ['50 23 * * *', 'UTC', DAY],
    ['* * * * * *', 'America/Toronto', SECOND],
  ])('%s in %s: %d ms, the same all year', (cron, tz, ms) => {
    expect(shortestCronGap(cron, tz, T)).toEqual({ ms });
  });

  it.each([
    // spring forward (2026-03-08): midnight to midnight is 23 h
    ['0 0 * * *', 'America/Toronto', 23 * HOUR, '2026-03-08T05:00:00.000Z'],
    // a fixed 01:30 runs once when it comes twice (2026-11-01): the spring-forward's 23 h is the shortest
    ['30 1 * * *', 'America/Toronto', 23 * HOUR, '2026-03-08T06:30:00.000Z'],
    // 02:30 in Berlin: at 03:00, the gap's end, on 2026-03-29; once on 2026-10-25
    ['30 2 * * *', 'Europe/Berlin', 23.5 * HOUR, '2026-03-28T01:30:00.000Z'],
    // an hour range runs 01:30 on both passes of the fall-back (2026-11-01), an hour apart
    ['30 1-1 * * *', 'America/Toronto', HOUR, '2026-11-01T05:30:00.000Z'],
    // Lord Howe moves its clock by 30 min: a half-hourly slot 30 min after the one before
    ['30 * * * *', 'Australia/Lord_Howe', 30 * MINUTE, '2026-04-04T14:30:00.000Z'],
    // its 02:00-02:30 gap (2026-10-04): 02:15 runs at 02:30, 15 min before 02:45
    ['15,45 2 * * *', 'Australia/Lord_Howe', 15 * MINUTE, '2026-10-03T15:30:00.000Z'],
  ])('%s in %s: %d ms across a DST change, at %s', (cron, tz, ms, at) => {
    const gap = shortestCronGap(cron, tz, T);
    expect(gap).toEqual({ ms, at: Date.parse(at) });
    // the two slots as the timer takes them
    expect(nextCronSlot(cron, tz, gap!.at!)).toBe(gap!.at! + ms);
  });

  it('null when no two slots are a day or less apart (a yearly, a weekly cron)', () => {
    expect(shortestCronGap('0 0 1 1 *', 'UTC', T)).toBeNull();
    expect(shortestCronGap('0 12 * * 0', 'Europe/Berlin', T)).toBeNull();
  });

  it('is cheap for a per-second cron in a zone with DST', () => {
    const started = performance.now();
    expect(shortestCronGap('* * * * * *', 'Europe/Paris', Date.parse('2031-06-01T00:00:00Z'))).toEqual({
      ms: SECOND,
    });
    expect(performance.now() - started).toBeLessThan(500); // a year of slots one by one takes minutes
  });
});

describe('a cron jitter not shorter than the gap between its slots', () => {
  const spec = { key: 'k', handler: 'h', cron: '* * * * *', tz: 'UTC' };

  it.each([
    [{ jitter: '2m' }, /not shorter than the 1 min between this cron's slots in UTC/, /shorter than 1m/],
    [{ jitter: 60_000 }, /not shorter than the 1 min/, /shorter than 1m/],
    [
      { cron: '0 0 * * *', tz: 'America/Toronto', jitter: '23h' },
      /the 23 h between this cron's slots in America\/Toronto from 2026-03-08T05:00:00.000Z/,
      /shorter than 23h/,
    ],
    [{ cron: '*/5 * * * * *', jitter: '5s' }, /the 5 s between/, /shorter than 5s/],
  ])('is refused: %j', (extra, message, fix) => {
    expect(() => normalizeSpec({ ...spec, ...extra, startAt: T })).toThrow(
      expect.objectContaining({
        reason: 'invalid',
        field: 'jitter',
        message: expect.stringMatching(message),
        fix: expect.stringMatching(fix),
      }),
    );
  });

  it('a jitter shorter than the gap is taken', () => {
    expect(normalizeSpec({ ...spec, jitter: '59s' }).jitter).toBe(59_000);
    expect(normalizeSpec({ ...spec, cron: '0 0 * * *', tz: 'UTC', jitter: '23h' }).jitter).toBe(23 * HOUR);
  });

  it('the engine refuses it at schedule, in a batch and on replace, and changes nothing', async () => {
    const clock = new VirtualClock(T);
    const timers = createEngine({ clock, handlers: { h: () => undefined } });
    const refused = expect.objectContaining({ reason: 'invalid', field: 'jitter' });
    await expect(timers.schedule({ ...spec, jitter: '2m' })).rejects.toThrow(refused);
    await timers.schedule({ ...spec, key: 'other', jitter: '30s' });
    await expect(
      timers.scheduleMany([
        { ...spec, key: 'a' },
        { ...spec, jitter: '10m' },
      ]),
    ).rejects.toThrow(expect.objectContaining({ reason: 'invalid', field: 'specs[1].jitter' }));
    await expect(
      timers.schedule({ ...spec, key: 'other', jitter: '1m', ifExists: 'replace' }),
    ).rejects.toThrow(refused);
    await expect(timers.preview({ ...spec, jitter: '2m' })).rejects.toThrow(refused);
    expect((await timers.list()).items.map((timer) => [timer.key, timer.jitter])).toEqual([
      ['other', 30_000],
    ]);
  });
});
