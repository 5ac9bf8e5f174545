/**
 * docs/spec.md §3.3c: a slot's jitter is computed in Lua (includes/slots.lua) where the row is armed and in
 * core (jitterOf) where the engine and the worker arm it; both must give the same number for every key,
 * so every replica and both backends agree on a timer's dues.
 */
import { jitterOf, nextCronOccurrence } from '@sundial/core';
import { useStore } from './store-fixture';

describe('jitter in Lua is core jitterOf', () => {
  const store = useStore();

  it('for 300 keys of every allowed character and jitters up to a day, on two clients of one prefix', async () => {
    const timers = store.open({ prefix: 'j' });
    const replica = store.open({ prefix: 'j' });
    const alphabet = 'ABCxyz0189:_-./@';
    const specs = Array.from({ length: 300 }, (_, i) => ({
      key: `${alphabet[i % alphabet.length]}${i}:${alphabet.slice(i % 7)}`,
      handler: 'h',
      every: '2d' as const,
      // 1 ms to a whole day: small, odd and power-of-two moduli
      jitter: [1, 7, 1000, 65_536, 3_599_999, 86_400_000][i % 6],
    }));
    const created = await timers.scheduleMany(specs);
    for (const [i, timer] of created.entries()) {
      const slot = timer.scheduledAt + 2 * 86_400_000;
      expect(timer.dueAt - slot).toBe(jitterOf(specs[i].key, slot, specs[i].jitter));
      expect(timer.jitter).toBe(specs[i].jitter);
      expect((await replica.get(specs[i].key))?.dueAt).toBe(timer.dueAt);
    }
  });

  it('for a cron: the client sends the slot, Lua moves it by the same jitter', async () => {
    const timers = store.open();
    const timer = await timers.schedule({
      key: 'nightly:report',
      handler: 'h',
      cron: '0 3 * * *',
      tz: 'Europe/Berlin',
      jitter: '15m',
    });
    const slot = nextCronOccurrence('0 3 * * *', 'Europe/Berlin', timer.scheduledAt);
    expect(timer.dueAt).toBe(slot + jitterOf('nightly:report', slot, 900_000));
    expect(timer.dueAt).toBeGreaterThanOrEqual(slot);
  });
});
