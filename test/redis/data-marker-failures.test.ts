import { SundialKeys } from '@sundial/redis';
import { Redis } from 'ioredis';
import { DataMarker } from '../../libs/redis/src/infra/data-marker';
import { eventsOn, useStore } from './store-fixture';

/**
 * docs/spec.md §4.1: a look whose writes fail part way (Redis away again, a command refused) neither
 * forgets the loss it found nor the reset it owes: the next look tells and publishes them.
 */
describe('the data marker when its writes fail', () => {
  const store = useStore();
  /** A connection as an ACL user allowed everything on `prefix` but `rules` take away. */
  const asUser = async (prefix: string, ...rules: string[]) => {
    await store.raw.acl('SETUSER', prefix, 'on', '>pw', '&*', '+@all', ...rules);
    return new Redis(store.url(), { username: prefix, password: 'pw' });
  };

  it('a reset whose publish was refused is owed, and published at the next look', async () => {
    const prefix = 'dmf-owed';
    const redis = await asUser(prefix, `~${prefix}:*`, '-publish');
    const events = await eventsOn(store.raw, store.url(), prefix);
    try {
      const seen = new DataMarker(redis, new SundialKeys(prefix, 2));
      expect(await seen.check()).toBeNull();
      await store.raw.del(`${prefix}:{p1}:epoch`);
      expect(await seen.check()).toMatchObject({ partitions: [1], reset: false });
      await store.raw.acl('SETUSER', prefix, '+publish');
      expect(await seen.check()).toBeNull();
      expect(await events.all()).toEqual([expect.objectContaining({ type: 'reset', count: 0 })]);
    } finally {
      events.close();
      redis.disconnect();
    }
  });

  it('a look that failed after writing the markers anew leaves the loss to the next look, with its reset', async () => {
    const prefix = 'dmf-partway';
    // May write the markers, and only read P:partitions: the look fails at its write of the count.
    const redis = await asUser(prefix, `~${prefix}:{*`, `~${prefix}:epoch`, `%R~${prefix}:*`);
    const events = await eventsOn(store.raw, store.url(), prefix);
    try {
      const seen = new DataMarker(redis, new SundialKeys(prefix, 2));
      await store.raw.set(`${prefix}:partitions`, '2');
      expect(await seen.check()).toBeNull();
      await store.raw.del(`${prefix}:{p0}:epoch`);
      await expect(seen.check()).rejects.toThrow(/NOPERM/);
      expect(await store.raw.get(`${prefix}:{p0}:epoch`)).not.toBeNull(); // written anew before it failed
      await store.raw.acl('SETUSER', prefix, `~${prefix}:*`);
      expect(await seen.check()).toMatchObject({ partitions: [0], reset: true });
      expect(await events.all()).toEqual([expect.objectContaining({ type: 'reset', count: 0 })]);
    } finally {
      events.close();
      redis.disconnect();
    }
  });
});
