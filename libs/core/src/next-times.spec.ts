import { createEngine } from './engine';
import { ledgerSizeFromEnv } from './ledger';
import { withOffset } from './next-times';
import type { TimerSpec } from './types';
import { VirtualClock } from './virtual-clock';

const START = Date.parse('2027-03-01T00:00:00Z');

function engine() {
  const clock = new VirtualClock(START);
  return { clock, timers: createEngine({ clock, handlers: { h: () => undefined } }) };
}

describe('next times (docs/spec.md §3.9)', () => {
  it('a daily 02:30 cron in America/Toronto runs at the gap end on the spring-forward day and changes offset', async () => {
    const { timers } = engine();
    await timers.schedule({ key: 'c', handler: 'h', cron: '30 2 * * *', tz: 'America/Toronto' });
    const times = await timers.next('c', { count: 16 });
    const around = times.filter((time) => time.at >= '2027-03-13' && time.at < '2027-03-16');
    // 2027-03-14 has no 02:30 in Toronto (02:00 → 03:00): a fixed time runs at 03:00, the gap's end (§3.3).
    expect(around).toEqual([
      { at: '2027-03-13T07:30:00.000Z', offset: '-05:00' },
      { at: '2027-03-14T07:00:00.000Z', offset: '-04:00' },
      { at: '2027-03-15T06:30:00.000Z', offset: '-04:00' },
    ]);
  });

  it('an interval: its due, then its grid, up to maxRuns; none while paused', async () => {
    const { timers } = engine();
    await timers.schedule({ key: 'i', handler: 'h', every: '1h', maxRuns: 3 });
    const times = await timers.next('i', { count: 10 });
    expect(times.map((time) => (Date.parse(time.at) - START) / 3_600_000)).toEqual([1, 2, 3]);
    await timers.pause('i');
    expect(await timers.next('i')).toEqual([]);
    await expect(timers.next('i', { count: 0 })).rejects.toMatchObject({ field: 'count' });
    await expect(timers.next('nope')).rejects.toMatchObject({ reason: 'not-found' });
  });

  it('preview: the normalized spec and its first times; a refusal is the same as schedule’s', async () => {
    const { timers } = engine();
    const preview = await timers.preview({ key: 'p', handler: 'h', delay: '5m' }, { count: 3 });
    expect(preview).toEqual({
      spec: expect.objectContaining({ key: 'p', kind: 'once', delayMs: 300_000 }),
      next: [{ at: new Date(START + 300_000).toISOString(), offset: '+00:00' }],
    });
    await expect(timers.preview({ key: 'p', handler: 'h', every: 1 })).rejects.toMatchObject({
      field: 'every',
    });
    expect(await timers.get('p')).toBeNull();
  });

  it('preview on the engine refuses a handler it does not know, as its schedule does (docs/spec.md §2)', async () => {
    const { timers } = engine();
    const spec: TimerSpec = { key: 'p', handler: 'hh', delay: '5m' };
    const refused = { reason: 'invalid', field: 'handler', fix: expect.stringContaining('"h"') };
    await expect(timers.schedule(spec)).rejects.toMatchObject(refused);
    await expect(timers.preview(spec)).rejects.toMatchObject(refused);
  });

  it('offsets: east and west of UTC, half hours', () => {
    expect(withOffset(START, 'Asia/Kolkata').offset).toBe('+05:30');
    expect(withOffset(START, 'America/Toronto').offset).toBe('-05:00');
    expect(withOffset(START, undefined).offset).toBe('+00:00');
  });

  it('SUNDIAL_LEDGER: off, a number, or unset', () => {
    expect(ledgerSizeFromEnv('off')).toBe(0);
    expect(ledgerSizeFromEnv(' 20 ')).toBe(20);
    expect(ledgerSizeFromEnv(undefined)).toBe(50);
    expect(() => ledgerSizeFromEnv('lots')).toThrow(
      expect.objectContaining({
        field: 'SUNDIAL_LEDGER',
        message: 'SUNDIAL_LEDGER "lots" is not a number of ledger entries',
      }),
    );
  });
});
