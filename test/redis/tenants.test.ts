import { EVENT_NAMES, SundialError } from '@sundial/core';
import { repartition } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import Redis from 'ioredis';
import { documentedAcl } from '../documented-acl';
import { record, refusal, useStore } from './store-fixture';

/**
 * Several installations ("tenants") on one Redis, told apart only by their prefix (docs/operations.md
 * "Several installations on one Redis"): `ten` (2 partitions), `ten2` (3, a prefix that starts with
 * `ten`) and `ten:b` (1, a prefix nested under `ten:`). What one does never reaches another's keys,
 * counts or listeners.
 */
describe('tenants on one Redis', () => {
  const store = useStore();
  const keys = Array.from({ length: 12 }, (_, n) => `k:${n}`);

  /** Every key under exactly `prefix` (not a nested prefix's) with its DUMP and TTL-less value. */
  const snapshot = async (prefix: string, others: string[]): Promise<Map<string, string>> => {
    const names = (await store.raw.keys(`${prefix}:*`)).filter(
      (name) => !others.some((other) => other.startsWith(`${prefix}:`) && name.startsWith(`${other}:`)),
    );
    const dumps = await Promise.all(names.map((name) => store.raw.dumpBuffer(name)));
    return new Map(
      names.map((name, i): [string, string] => [name, dumps[i]?.toString('hex') ?? 'gone']).sort(),
    );
  };

  it('a prefix with a brace is refused before a connection or a key: it would land in another prefix’s partitions', async () => {
    // 'a:{p1}:x' would write under 'a:{p1}:', the base of partition 1 of prefix 'a', whose repartition
    // to 1 partition scans 'a:{p1}:*' and deletes what it finds.
    for (const prefix of ['a:{p1}:x', 't{x}', '}']) {
      const error = (() => {
        try {
          store.open({ prefix });
        } catch (thrown) {
          return thrown;
        }
      })();
      expect(error).toBeInstanceOf(SundialError);
      expect(error).toMatchObject({ reason: 'invalid', field: 'prefix' });
      expect((error as SundialError).fix).toContain('without braces');
      const refused = await refusal(repartition({ connection: store.url(), prefix, to: 1 }));
      expect(refused).toMatchObject({ reason: 'invalid', field: 'prefix' });
    }
    expect(await store.raw.keys('*{*')).toEqual([]);
  });

  it('cancelAll and a repartition of one tenant leave the others’ timers, keys, counts and listeners alone', async () => {
    const tenants = { ten: 2, ten2: 3, 'ten:b': 1 };
    const names = Object.keys(tenants);
    const open = (prefix: string) =>
      store.open({ prefix, partitions: tenants[prefix as keyof typeof tenants] });
    const [a, b, c] = names.map(open);
    for (const timers of [a, b, c])
      await timers.scheduleMany(keys.map((key) => ({ key, handler: 'h', delay: '1h' })));
    const before = await Promise.all(['ten2', 'ten:b'].map((prefix) => snapshot(prefix, names)));
    const heard = [b, c].map((timers) => record(timers, ...EVENT_NAMES));
    const own = record(a, 'cancelled', 'reset');

    expect(await a.cancelAll()).toBe(keys.length);
    // a's own listener hears its resets; the same Redis published the others' channels in that order
    await waitFor(() => own.length >= keys.length, { what: "ten's own events" });
    await a.scheduleMany(keys.map((key) => ({ key, handler: 'h', delay: '1h' })));
    expect(await repartition({ connection: store.url(), prefix: 'ten', to: 1 })).toMatchObject({
      from: 2,
      to: 1,
    });

    expect(heard).toEqual([[], []]);
    expect(await Promise.all(['ten2', 'ten:b'].map((prefix) => snapshot(prefix, names)))).toEqual(before);
    for (const timers of [b, c]) expect((await timers.list()).items).toHaveLength(keys.length);
    expect(await store.raw.mget('ten:partitions', 'ten2:partitions', 'ten:b:partitions')).toEqual([
      '1',
      '3',
      '1',
    ]);
  });

  it('another prefix losing its data (dl2, dl:b: their keys deleted) is no loss of this one', async () => {
    const [a, b, c] = ['dl', 'dl2', 'dl:b'].map((prefix) => store.open({ prefix, partitions: 2 }));
    for (const timers of [a, b, c]) await timers.schedule({ key: 'k', handler: 'h', delay: '1h' });
    for (const prefix of ['dl2', 'dl:b']) await store.raw.del(...(await store.raw.keys(`${prefix}:*`)));
    expect((await a.list()).items.map((timer) => timer.key)).toEqual(['k']);
    expect(store.logs.filter((line) => line.message.includes("lost Sundial's data"))).toEqual([]);
    await b.list();
    const lost = store.logs.filter((line) => line.message.includes("lost Sundial's data"));
    expect(lost.map((line) => line.message)).toEqual([
      expect.stringContaining("Redis lost Sundial's data under prefix 'dl2'"),
    ]);
  });

  it('a prefix under another installation’s (nest:x under nest) is warned of at start, once, with the fix', async () => {
    await store.open({ prefix: 'nest' }).schedule({ key: 'k', handler: 'h', delay: '1h' });
    await store.open({ prefix: 'nested' }).schedule({ key: 'k', handler: 'h', delay: '1h' });
    expect(store.logs).toEqual([]);
    for (const timers of [store.open({ prefix: 'nest:x:y' }), store.open({ prefix: 'nest:x:y' })])
      await timers.schedule({ key: `k${store.logs.length}`, handler: 'h', delay: '1h' });
    expect(store.logs).toEqual([
      {
        level: 'warn',
        message: expect.stringContaining(
          "Sundial prefix 'nest:x:y' lies under prefix 'nest' of another installation on this Redis",
        ),
        fields: expect.objectContaining({
          prefix: 'nest:x:y',
          under: 'nest',
          fix: expect.stringContaining("'nest-x-y'"),
        }),
      },
    ]);
  });

  it("the documented ACL user of one prefix reaches none of another prefix's keys or channels", async () => {
    const user = documentedAcl('pw').map((word) =>
      word === 'sundial' ? 'tenant-acl' : word.replace(/^([~&])sundial:\*$/, '$1acl:*'),
    );
    expect(user).toEqual(expect.arrayContaining(['tenant-acl', '~acl:*', '&acl:*']));
    await store.raw.call('ACL', 'SETUSER', ...user);
    const url = store.url().replace('redis://', 'redis://tenant-acl:pw@');
    const other = store.open({ prefix: 'acl2' });
    await other.schedule({ key: 'theirs', handler: 'h', delay: '1h' });

    const mine = store.open({ connection: url, prefix: 'acl' });
    await mine.schedule({ key: 'mine', handler: 'h', delay: '1h' });
    expect(await mine.cancelAll()).toBe(1);

    const as = new Redis(url);
    const subscriber = new Redis(url);
    try {
      for (const call of [
        () => as.get('acl2:partitions'),
        () => as.del(other.keys.row('theirs')),
        () => as.publish('acl2:events', '{}'),
        () => subscriber.subscribe('acl2:events'),
        // Redis does not filter these by key patterns: granted, they would list every prefix's keys
        () => as.scan('0'),
        () => as.keys('*'),
      ])
        await expect(call()).rejects.toThrow(/NOPERM/);
      expect(await store.raw.exists(other.keys.row('theirs'))).toBe(1);
    } finally {
      as.disconnect();
      subscriber.disconnect();
    }
  });
});
