/* The engine's ledger: size, lifetime, opt-out (the entries themselves are in test/conformance/ledger.test.ts). */
import { VirtualClock } from '../virtual-clock';
import { createEngine } from './engine';

const START = Date.parse('2026-03-01T00:00:00Z');
const DAY = 86_400_000;

function engine(options: { ledger?: number; tombstoneMs?: number } = {}) {
  const clock = new VirtualClock(START);
  return { clock, timers: createEngine({ clock, handlers: { h: () => undefined }, ...options }) };
}

describe('engine ledger', () => {
  it('keeps the last `ledger` entries, newest first; history takes a limit', async () => {
    const { timers } = engine({ ledger: 3 });
    await timers.schedule({ key: 'k', handler: 'h', delay: '1h' });
    for (let i = 0; i < 3; i++) {
      await timers.pause('k');
      await timers.resume('k');
    }
    const entries = await timers.history('k');
    expect(entries.map((entry) => [entry.event, entry.version])).toEqual([
      ['resumed', 7],
      ['paused', 6],
      ['resumed', 5],
    ]);
    expect(await timers.history('k', { limit: 1 })).toEqual(entries.slice(0, 1));
    await expect(timers.history('k', { limit: 201 })).rejects.toMatchObject({ field: 'limit' });
  });

  it('a cancelled key keeps its ledger as long as its tombstone; a removed one 7 days', async () => {
    const { clock, timers } = engine({ tombstoneMs: DAY });
    await timers.schedule({ key: 'c', handler: 'h', delay: '1h' });
    await timers.cancel('c');
    await timers.schedule({ key: 'r', handler: 'h', delay: 10 });
    await clock.advance(DAY - 1);
    expect((await timers.history('c')).map((entry) => entry.event)).toEqual(['cancelled', 'scheduled']);
    expect((await timers.history('r')).map((entry) => entry.event)).toEqual([
      'completed',
      'claimed',
      'scheduled',
    ]);
    await clock.advance(1);
    await expect(timers.history('c')).rejects.toMatchObject({ reason: 'not-found' });
    await clock.advance(6 * DAY + 10); // removed at 10 ms, kept 7 days from then
    await expect(timers.history('r')).rejects.toMatchObject({ reason: 'not-found' });
  });

  it('a kept finished row that cancel or cancelAll drops keeps its ledger 7 days', async () => {
    const { clock, timers } = engine();
    for (const key of ['kept:cancel', 'kept:all']) {
      await timers.schedule({ key, handler: 'h', delay: 10, removeOnComplete: false });
    }
    await clock.advance(10);
    expect(await timers.cancel('kept:cancel')).toBe(false);
    expect(await timers.cancelAll('kept:')).toBe(0);
    await clock.advance(7 * DAY - 1);
    expect((await timers.history('kept:all')).map((entry) => entry.event)).toContain('completed');
    await clock.advance(1);
    for (const key of ['kept:cancel', 'kept:all']) {
      await expect(timers.history(key)).rejects.toMatchObject({ reason: 'not-found' });
    }
  });

  it('a key scheduled again goes on in the same ledger, and lives with its row again', async () => {
    const { clock, timers } = engine({ tombstoneMs: DAY });
    await timers.schedule({ key: 'k', handler: 'h', delay: '1h' });
    await timers.cancel('k');
    await timers.schedule({ key: 'k', handler: 'h', delay: '30d' });
    await clock.advance(2 * DAY);
    expect((await timers.history('k')).map((entry) => [entry.event, entry.version])).toEqual([
      ['scheduled', 1],
      ['cancelled', 2],
      ['scheduled', 1],
    ]);
  });

  it('ledger: 0 records nothing', async () => {
    const { timers } = engine({ ledger: 0 });
    await timers.schedule({ key: 'k', handler: 'h', delay: '1h' });
    await timers.pause('k');
    expect(await timers.history('k')).toEqual([]);
    await expect(timers.history('never')).rejects.toMatchObject({ reason: 'not-found' });
  });

  it('refuses a ledger size that is not 0..1000', () => {
    expect(() => engine({ ledger: -1 })).toThrow(
      expect.objectContaining({ reason: 'invalid', field: 'ledger' }),
    );
  });
});
