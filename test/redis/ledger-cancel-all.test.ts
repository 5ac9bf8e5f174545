import { RedisTimers } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { story, useFirePath } from './fire-fixture';

const fire = useFirePath();

describe('ledger (docs/spec.md §3.9) on Redis with a real TimerRunner', () => {
  it('cancelAll of timers with no ledger list writes none: history shows each cancel, with the kept hand-off', async () => {
    const cluster = await fire.cluster();
    // Handed over 900 ms before its due, with no runner: the hand-off is kept on the row (`lq`).
    await cluster.dispatcher({ leadMs: 900 });
    await cluster.timers.schedule({ key: 'bulk:armed', handler: 'h', delay: 1_500 });
    await cluster.timers.schedule({ key: 'bulk:fresh', handler: 'h', delay: '1h' });
    await waitFor(async () => (await cluster.timers.history('bulk:armed'))[0].event === 'armed', {
      timeoutMs: 5_000, // a deadline, left as soon as it holds
    });
    expect(await cluster.timers.cancelAll('bulk:')).toBe(2);
    for (const key of ['bulk:armed', 'bulk:fresh']) {
      expect(await fire.raw.exists(cluster.timers.keys.ledger(key))).toBe(0);
    }
    const armed = await cluster.timers.history('bulk:armed');
    expect(story(armed)).toEqual([
      ['scheduled', 1],
      ['armed', 1],
      ['cancelled', 2, 'cancelled'],
    ]);
    expect(story(await cluster.timers.history('bulk:fresh'))).toEqual([
      ['scheduled', 1],
      ['cancelled', 2, 'cancelled'],
    ]);
    expect(await cluster.timers.history('bulk:armed', { limit: 1 })).toEqual(armed.slice(0, 1));
    // Scheduled again, the key goes on in the same ledger: the derived entries are written under the new one.
    await cluster.timers.schedule({ key: 'bulk:armed', handler: 'h', delay: '1h' });
    await cluster.timers.pause('bulk:armed');
    expect(story(await cluster.timers.history('bulk:armed'))).toEqual([
      ['scheduled', 1],
      ['armed', 1],
      ['cancelled', 2, 'cancelled'],
      ['scheduled', 1],
      ['paused', 2],
    ]);
    expect(await fire.raw.pttl(cluster.timers.keys.ledger('bulk:armed'))).toBe(-1);
  });

  it('a global cancelAll over timers with and without a list: each cancel recorded once, reason reset', async () => {
    const cluster = await fire.cluster();
    // A list, then a hand-off kept on the row: both go into the list with the cancel.
    await cluster.dispatcher({ leadMs: 900 });
    await cluster.timers.schedule({ key: 'r:listed', handler: 'h', delay: '1h' });
    await cluster.timers.pause('r:listed');
    await cluster.timers.reschedule('r:listed', { delay: 1_500 });
    await waitFor(async () => (await cluster.timers.history('r:listed'))[0].event === 'armed', {
      timeoutMs: 5_000, // a deadline, left as soon as it holds
    });
    await cluster.timers.schedule({ key: 'r:fresh', handler: 'h', delay: '1h' });
    expect(await cluster.timers.cancelAll()).toBe(2);
    expect(story(await cluster.timers.history('r:listed'))).toEqual([
      ['scheduled', 1],
      ['paused', 2],
      ['rescheduled', 3],
      ['armed', 3],
      ['cancelled', 4, 'reset'],
    ]);
    expect(await fire.raw.llen(cluster.timers.keys.ledger('r:listed'))).toBe(5);
    expect(story(await cluster.timers.history('r:fresh'))).toEqual([
      ['scheduled', 1],
      ['cancelled', 2, 'reset'],
    ]);
    const tombstoneEnd = await fire.raw.pexpiretime(cluster.timers.keys.tombstone('r:fresh'));
    expect(await fire.raw.exists(cluster.timers.keys.cancelRecord('r:fresh', tombstoneEnd))).toBe(1);
    await cluster.timers.schedule({ key: 'r:fresh', handler: 'h', delay: '1h' });
    expect(story(await cluster.timers.history('r:fresh'))).toEqual([
      ['scheduled', 1],
      ['cancelled', 2, 'reset'],
      ['scheduled', 1],
    ]);
  });

  it('a finished row kept by removeOnComplete: false that cancelAll drops keeps its ledger 7 days, as cancel’s', async () => {
    const cluster = await fire.cluster();
    await cluster.dispatcher();
    await cluster.runner({ h: async () => undefined });
    for (const key of ['kept:cancel', 'kept:all']) {
      await cluster.timers.schedule({ key, handler: 'h', delay: 10, removeOnComplete: false });
    }
    await waitFor(async () => (await cluster.timers.list({ status: 'completed' })).items.length === 2, {
      timeoutMs: 5_000, // a deadline, left as soon as it holds
    });
    expect(await cluster.timers.cancel('kept:cancel')).toBe(false);
    expect(await cluster.timers.cancelAll('kept:')).toBe(0);
    const week = 7 * 86_400_000;
    for (const key of ['kept:cancel', 'kept:all']) {
      expect(await cluster.timers.get(key)).toBeNull();
      expect(story(await cluster.timers.history(key)).map(([event]) => event)).toContain('completed');
      expect(await fire.raw.pttl(cluster.timers.keys.ledger(key))).toBeGreaterThan(week - 60_000);
    }
  });

  it('a cancelAll whose record ms another call holds writes each key’s entries to its list', async () => {
    const cluster = await fire.cluster();
    const tombstoneMs = 60_000;
    const timers = new RedisTimers({ connection: fire.url(), prefix: cluster.prefix, tombstoneMs });
    try {
      await timers.schedule({ key: 'taken:listed', handler: 'h', delay: '1h' });
      await timers.pause('taken:listed');
      await timers.resume('taken:listed');
      await timers.schedule({ key: 'taken:fresh', handler: 'h', delay: '1h' });
      // Another call's records (another reason) on every ms this cancelAll's tombstones may expire at.
      const from = (await cluster.redisNow()) + tombstoneMs;
      const taken = fire.raw.pipeline();
      for (let ms = from; ms < from + 10_000; ms++) {
        taken.set(timers.keys.cancelRecord('taken:fresh', ms), '{"a":0,"r":"reset"}', 'PX', tombstoneMs * 2);
      }
      await taken.exec();
      expect(await timers.cancelAll('taken:')).toBe(2);
      const end = await fire.raw.pexpiretime(timers.keys.tombstone('taken:fresh'));
      expect(end - from).toBeLessThan(10_000);
      expect(await fire.raw.llen(timers.keys.ledger('taken:fresh'))).toBe(2);
      expect(await fire.raw.pexpiretime(timers.keys.ledger('taken:fresh'))).toBeGreaterThan(from);
      expect(story(await timers.history('taken:fresh'))).toEqual([
        ['scheduled', 1],
        ['cancelled', 2, 'cancelled'],
      ]);
      expect(story(await timers.history('taken:listed'))).toEqual([
        ['scheduled', 1],
        ['paused', 2],
        ['resumed', 3],
        ['cancelled', 4, 'cancelled'],
      ]);
    } finally {
      await timers.dispose();
    }
  });
});
