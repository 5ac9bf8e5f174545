import { RedisTimers } from '@sundial/redis';
import { useFirePath } from './fire-fixture';

const fire = useFirePath();

describe('ledger (docs/spec.md §3.9) on Redis with a real TimerRunner', () => {
  it('keeps the last `ledger` entries only', async () => {
    const cluster = await fire.cluster();
    const timers = new RedisTimers({ connection: fire.url(), prefix: cluster.prefix, ledger: 5 });
    try {
      await timers.schedule({ key: 'capped', handler: 'h', delay: '1h' });
      for (let i = 0; i < 4; i++) {
        await timers.pause('capped');
        await timers.resume('capped');
      }
      const entries = await timers.history('capped', { limit: 200 });
      expect(entries.map((entry) => [entry.event, entry.version])).toEqual([
        ['resumed', 9],
        ['paused', 8],
        ['resumed', 7],
        ['paused', 6],
        ['resumed', 5],
      ]);
      expect(await fire.raw.llen(timers.keys.ledger('capped'))).toBe(5);
      expect(await timers.history('capped', { limit: 2 })).toEqual(entries.slice(0, 2));
    } finally {
      await timers.dispose();
    }
  });

  it('ledger: 0 (SUNDIAL_LEDGER=off) writes no ledger; history of a live timer is empty', async () => {
    const cluster = await fire.cluster();
    const timers = new RedisTimers({ connection: fire.url(), prefix: cluster.prefix, ledger: 0 });
    try {
      await timers.schedule({ key: 'quiet', handler: 'h', delay: '1h' });
      await timers.pause('quiet');
      await timers.cancel('quiet');
      expect(await fire.raw.exists(timers.keys.ledger('quiet'))).toBe(0);
      expect(await timers.history('quiet')).toEqual([]);
      await expect(timers.history('never')).rejects.toMatchObject({ reason: 'not-found' });
    } finally {
      await timers.dispose();
    }
  });

  it('costs a pending timer nothing: its first entry is implied by the row (MEMORY USAGE with and without)', async () => {
    const cluster = await fire.cluster();
    const off = new RedisTimers({ connection: fire.url(), prefix: `${cluster.prefix}off`, ledger: 0 });
    try {
      const spec = { handler: 'h', delay: '30d' as const, payload: { invoice: 42 } };
      await cluster.timers.schedule({ ...spec, key: 'mem:1' });
      await off.schedule({ ...spec, key: 'mem:1' });
      const usage = (name: string) =>
        fire.raw.call('MEMORY', 'USAGE', name, 'SAMPLES', '0') as Promise<number | null>;
      const withLedger = await usage(cluster.timers.keys.row('mem:1'));
      expect(await usage(cluster.timers.keys.ledger('mem:1'))).toBeNull();
      expect(await usage(off.keys.row('mem:1'))).toBe(withLedger);
      expect(await cluster.timers.history('mem:1')).toEqual([
        expect.objectContaining({ event: 'scheduled', version: 1 }),
      ]);
      // The first change writes the implied entry under its own: two small entries.
      await cluster.timers.pause('mem:1');
      expect(await fire.raw.llen(cluster.timers.keys.ledger('mem:1'))).toBe(2);
      expect(await usage(cluster.timers.keys.ledger('mem:1'))).toBeLessThan(250);
    } finally {
      await off.dispose();
    }
  });
});
