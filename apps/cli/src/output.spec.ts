import type { Timer } from '@sundial/core';
import { schedule } from './output';

/** `sundial list` / `get` write an interval as the operator UI does: "every 1 h", not "every 3600000 ms". */
describe('cli output: schedule', () => {
  const timer = (fields: Partial<Timer>) => ({ kind: 'interval', ...fields }) as Timer;

  it.each([
    [300, 'every 300 ms'],
    [30_000, 'every 30 s'],
    [90_000, 'every 1.5 min'],
    [3_600_000, 'every 1 h'],
    [86_400_000 * 14, 'every 14 d'],
  ])('everyMs %d reads %s', (everyMs, text) => {
    expect(schedule(timer({ everyMs }))).toBe(text);
  });

  it('a cron names its zone; a one-shot is once', () => {
    expect(schedule(timer({ kind: 'cron', cron: '0 7 * * 1-5', tz: 'America/Toronto' }))).toBe(
      'cron 0 7 * * 1-5 (America/Toronto)',
    );
    expect(schedule(timer({ kind: 'once' }))).toBe('once');
  });
});
