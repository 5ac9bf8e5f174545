import { nextCronOccurrence, type TimerSpec } from '@sundial/core';
import { type RedisTimers, runScript } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { eventually, keysUnder, record, redisNow, refusal, useStore } from './store-fixture';

const store = useStore();

/**
 * schedule.lua called directly on partition 0 with one spec (flat, sent as JSON: key, ifExists, kind, at, h,
 * p, n, n more row-field pairs), no guard keys, as a later call of a batch whose first call had request `first` ('' none).
 */
function runSchedule(timers: RedisTimers, first: string, spec: (string | number)[]): Promise<unknown> {
  const keys = timers.keys;
  return runScript(
    store.raw,
    'schedule',
    keys.base(0),
    keys.ledgerSize,
    keys.prefix,
    1000,
    first,
    '[]',
    JSON.stringify(spec),
  );
}

describe('RedisTimers.schedule', () => {
  it('writes the row, its arming intent and both indexes, and emits scheduled', async () => {
    const timers = store.open();
    const events = record(timers, 'scheduled');
    const before = await redisNow(store.raw);
    const timer = await timers.schedule({
      key: 'invoice:42',
      handler: 'invoice.remind',
      delay: '3d',
      payload: { n: 42 },
    });
    const after = await redisNow(store.raw);

    expect(timer).toMatchObject({
      id: '1p0',
      key: 'invoice:42',
      version: 1,
      kind: 'once',
      status: 'pending',
      handler: 'invoice.remind',
      payload: { n: 42 },
      delayMs: 3 * 86_400_000,
      runCount: 0,
      awaitTask: true,
      removeOnComplete: true,
      delivery: 'at-least-once',
      last: null,
    });
    expect(timer.scheduledAt).toBeGreaterThanOrEqual(before);
    expect(timer.scheduledAt).toBeLessThanOrEqual(after);
    expect(timer.dueAt).toBe(timer.scheduledAt + 3 * 86_400_000);

    const prefix = timers.keys.prefix;
    expect(await store.raw.zscore(`${prefix}:{p0}:due`, 'invoice:42')).toBe(String(timer.dueAt));
    expect(await store.raw.zscore(`${prefix}:{p0}:keys`, 'invoice:42')).toBe('0');
    // id 1p0 is live: bit 1 of partition 0's first live-id bitmap (store/live-ids.ts)
    expect(await store.raw.getbit(`${prefix}:{p0}:i:0:0`, 1)).toBe(1);
    expect(await store.raw.smembers(`${prefix}:{p0}:ic`)).toEqual(['0:0']);
    expect(await timers.get('invoice:42')).toEqual(timer);
    const event = await eventually(events, { type: 'scheduled', key: 'invoice:42' });
    expect(event).toEqual({
      type: 'scheduled',
      id: '1p0',
      key: 'invoice:42',
      version: 1,
      kind: 'once',
      at: timer.scheduledAt,
      due: timer.dueAt,
    });
  });

  it('computes each kind’s first due from the Redis clock', async () => {
    const timers = store.open();
    const every = await timers.schedule({ key: 'beat', handler: 'h', every: '30s' });
    expect(every.dueAt).toBe(every.scheduledAt + 30_000);
    expect(every.everyMs).toBe(30_000);

    const past = await timers.schedule({ key: 'late', handler: 'h', at: '2020-01-01T00:00:00Z' });
    expect(past.dueAt).toBe(Date.parse('2020-01-01T00:00:00Z')); // due at once, as core firstDue

    const cron = await timers.schedule({
      key: 'digest',
      handler: 'h',
      cron: '*/5 * * * * *',
      tz: 'Europe/Paris',
    });
    expect(cron.dueAt).toBeGreaterThan(cron.scheduledAt);
    expect(cron.dueAt).toBe(nextCronOccurrence('*/5 * * * * *', 'Europe/Paris', cron.scheduledAt));
    expect(cron).toMatchObject({ kind: 'cron', cron: '*/5 * * * * *', tz: 'Europe/Paris' });
  });

  it('refuses a cron occurrence that is not after Redis now with retry, unchanged (the client recomputes)', async () => {
    const timers = store.open();
    const at = (await redisNow(store.raw)) - 1;
    const spec = ['c', 'error', 'cron', String(at), 'h', '', 3, 'k', 'cron', 'cr', '* * * * *', 'tz', 'UTC'];
    expect(await runSchedule(timers, '', spec)).toEqual(['retry', expect.any(Number)]);
    expect(await keysUnder(store.raw, timers.keys.prefix)).toEqual([]);
  });

  it('refuses a live key with ifExists error (the default) and changes nothing', async () => {
    const timers = store.open();
    const first = await timers.schedule({ key: 'k', handler: 'h', delay: '1h' });
    const before = await keysUnder(store.raw, timers.keys.prefix);
    const error = await refusal(timers.schedule({ key: 'k', handler: 'other', delay: '2h' }));
    expect(error).toMatchObject({ reason: 'duplicate-key', field: 'key' });
    expect(error.fix).toMatch(/replace/);
    expect(await timers.get('k')).toEqual(first);
    expect(await keysUnder(store.raw, timers.keys.prefix)).toEqual(before);
    expect(await store.raw.get(`${timers.keys.prefix}:{p0}:seq`)).toBe('1');
  });

  it('replaces a live key with a new id and version 1, cancelling the old entry as replaced', async () => {
    const timers = store.open();
    const events = record(timers, 'cancelled');
    const old = await timers.schedule({ key: 'k', handler: 'h', delay: '1h' });
    const fresh = await timers.schedule({ key: 'k', handler: 'h2', every: '1m', ifExists: 'replace' });
    expect(fresh).toMatchObject({
      id: '2p0',
      version: 1,
      kind: 'interval',
      handler: 'h2',
      status: 'pending',
    });
    expect(await timers.check(old.id)).toBe(false);
    expect(await timers.check(fresh.id)).toBe(true);
    expect(await store.raw.exists(timers.keys.tombstone('k'))).toBe(0);
    expect(await eventually(events, { id: old.id })).toMatchObject({ reason: 'replaced', version: 2 });
  });

  it('keeps a live key unchanged, warning only when the requested time differs', async () => {
    const timers = store.open();
    const first = await timers.schedule({ key: 'k', handler: 'h', delay: '1h' });
    expect(await timers.schedule({ key: 'k', handler: 'h', delay: '1h', ifExists: 'keep' })).toEqual(first);
    expect(store.logs).toEqual([]);
    expect(await timers.schedule({ key: 'k', handler: 'h', delay: '5m', ifExists: 'keep' })).toEqual(first);
    expect(store.logs).toEqual([
      expect.objectContaining({ level: 'warn', fields: expect.objectContaining({ key: 'k', id: first.id }) }),
    ]);
  });

  it('keeps a cancelled name cancelled until its tombstone expires', async () => {
    const timers = store.open({ tombstoneMs: 150 });
    const first = await timers.schedule({ key: 'k', handler: 'h', delay: '1h' });
    expect(await timers.cancel('k')).toBe(true);
    const kept = await timers.schedule({ key: 'k', handler: 'h', delay: '1h', ifExists: 'keep' });
    expect(kept).toMatchObject({ id: first.id, status: 'cancelled', version: 2 });
    expect(await timers.get('k')).toBeNull();
    expect(await timers.snapshot()).toEqual([]);

    await waitFor(async () => (await store.raw.exists(timers.keys.tombstone('k'))) === 0, {
      what: 'tombstone expiry',
    });
    const revived = await timers.schedule({ key: 'k', handler: 'h', delay: '1h', ifExists: 'keep' });
    expect(revived).toMatchObject({ id: '2p0', status: 'pending', version: 1 });
  });

  it('creates over a tombstone with ifExists error and forgets the tombstone', async () => {
    const timers = store.open();
    await timers.schedule({ key: 'k', handler: 'h', delay: '1h' });
    await timers.cancel('k');
    const fresh = await timers.schedule({ key: 'k', handler: 'h', delay: '1h' });
    expect(fresh).toMatchObject({ id: '2p0', status: 'pending' });
    expect(await store.raw.exists(timers.keys.tombstone('k'))).toBe(0);
    expect(await timers.schedule({ key: 'k', handler: 'h', delay: '1h', ifExists: 'keep' })).toEqual(fresh);
  });

  it.each<[string, unknown, string]>([
    ['no schedule', { key: 'k', handler: 'h' }, 'invalid'],
    ['a bad key', { key: 'bad key!', handler: 'h', delay: 10 }, 'invalid'],
    ['cron without tz', { key: 'k', handler: 'h', cron: '* * * * *' }, 'invalid'],
    [
      'a huge payload',
      { key: 'k', handler: 'h', delay: 10, payload: 'x'.repeat(70_000) },
      'payload-too-large',
    ],
  ])('refuses %s with a SundialError and writes nothing', async (_, spec, reason) => {
    const timers = store.open();
    const error = await refusal(timers.schedule(spec as TimerSpec));
    expect(error.reason).toBe(reason);
    expect(error.fix).toEqual(expect.any(String));
    expect(await keysUnder(store.raw, timers.keys.prefix)).toEqual([]);
  });
});

/** `count` one-shots `<name>:<i>` due in an hour. */
function hourAway(name: string, count: number): TimerSpec[] {
  return Array.from({ length: count }, (_, i) => ({ key: `${name}:${i}`, handler: 'h', delay: '1h' }));
}

describe('RedisTimers.scheduleMany', () => {
  it('returns the timers in input order, each in its own partition', async () => {
    const timers = store.open({ partitions: 4 });
    const specs = Array.from({ length: 40 }, (_, i): TimerSpec => ({
      key: `user:${i}`,
      handler: 'h',
      delay: 60_000 + i,
    }));
    const created = await timers.scheduleMany(specs);
    expect(created.map((t) => t.key)).toEqual(specs.map((s) => s.key));
    expect(new Set(created.map((t) => t.id)).size).toBe(40);
    for (const timer of created) {
      const partition = timers.keys.partitionOf(timer.key);
      expect(timer.id).toMatch(new RegExp(`^\\d+p${partition}$`));
      expect(timer.dueAt).toBe(timer.scheduledAt + timer.delayMs!);
      expect(await store.raw.zscore(timers.keys.keys(partition), timer.key)).toBe('0');
    }
    expect(new Set(created.map((t) => timers.keys.partitionOf(t.key))).size).toBe(4);
    expect((await timers.snapshot()).sort()).toEqual(created.map((t) => t.id).sort());
  });

  it('writes nothing when one spec is invalid', async () => {
    const timers = store.open({ partitions: 2 });
    const error = await refusal(
      timers.scheduleMany([
        { key: 'a', handler: 'h', delay: 10 },
        { key: 'b', handler: 'h', every: 5 },
      ]),
    );
    expect(error).toMatchObject({ reason: 'invalid', field: 'specs[1].every' });
    expect(await keysUnder(store.raw, timers.keys.prefix)).toEqual([]);
  });

  // 4 partitions: the batch is checked before any call; 1 partition, 121 specs: two calls sent at once,
  // the first checks the second's keys, and the second runs only after the first's 'ok'.
  it.each([
    { partitions: 4, fresh: 8 },
    { partitions: 1, fresh: 120 },
  ])(
    'writes nothing when a key is live in another call ($partitions partitions) or repeated in the batch',
    async ({ partitions, fresh: count }) => {
      const timers = store.open({ partitions });
      await timers.schedule({ key: 'taken', handler: 'h', delay: '1h' });
      const before = await keysUnder(store.raw, timers.keys.prefix);
      const fresh = hourAway('fresh', count);
      expect(
        await refusal(timers.scheduleMany([...fresh, { key: 'taken', handler: 'h', delay: 5 }])),
      ).toMatchObject({
        reason: 'duplicate-key',
        field: `specs[${count}].key`,
        message: expect.stringContaining('taken'),
      });
      expect(
        await refusal(
          timers.scheduleMany([
            { key: 'twice', handler: 'h', delay: 5 },
            { key: 'twice', handler: 'h', delay: 6 },
          ]),
        ),
      ).toMatchObject({ reason: 'duplicate-key', field: 'specs[1].key' });
      expect(await keysUnder(store.raw, timers.keys.prefix)).toEqual(before);
    },
  );

  it('splits a large batch into bounded calls and still refuses a duplicate in any of them up front', async () => {
    const timers = store.open();
    const specs = hourAway('big', 2500);
    expect(
      await refusal(timers.scheduleMany([...specs, { key: 'big:7', handler: 'h', delay: 5 }])),
    ).toMatchObject({
      reason: 'duplicate-key',
    });
    expect(await keysUnder(store.raw, timers.keys.prefix)).toEqual([]);
    const created = await timers.scheduleMany(specs);
    expect(created.map((t) => t.key)).toEqual(specs.map((s) => s.key));
    expect(await store.raw.zcard(timers.keys.keys(0))).toBe(2500);
  });

  it('refuses, unchanged, a later call of a batch whose first call left no answer', async () => {
    const timers = store.open();
    await timers.schedule({ key: 'seed', handler: 'h', delay: '1h' });
    const before = await keysUnder(store.raw, timers.keys.prefix);
    const spec = ['later', 'error', 'once', String(Date.now() + 60_000), 'h', '', 0];
    expect(await runSchedule(timers, 'no-such-request', spec)).toEqual(['refused']);
    expect(await keysUnder(store.raw, timers.keys.prefix)).toEqual(before);
  });

  it('marks live the ids of a batch that crosses from one live-id bitmap into the next', async () => {
    const timers = store.open();
    await timers.schedule({ key: 'seed', handler: 'h', delay: '1h' }); // the partition's keys exist
    await store.raw.set(`${timers.keys.base(0)}seq`, 65_530);
    const created = await timers.scheduleMany(
      Array.from({ length: 80 }, (_, i): TimerSpec => ({ key: `k:${i}`, handler: 'h', delay: '1h' })),
    );
    expect(created.map((t) => t.id)).toEqual(created.map((_, i) => `${65_531 + i}p0`));
    for (const timer of created) expect(await timers.check(timer.id)).toBe(true);
    expect(await timers.check('65530p0')).toBe(false);
    expect(await timers.check('65611p0')).toBe(false);
    expect(await store.raw.bitcount(`${timers.keys.base(0)}i:0:0`)).toBe(1 + 5); // seed and 65531..65535
    expect(await store.raw.bitcount(`${timers.keys.base(0)}i:0:1`)).toBe(75);
  });

  it('indexes only the last of a key written several times in one batch', async () => {
    const timers = store.open();
    const [first, second, kept] = await timers.scheduleMany([
      { key: 'a', handler: 'h', delay: '1h' },
      { key: 'a', handler: 'h2', delay: '2h', ifExists: 'replace' },
      { key: 'a', handler: 'h3', delay: '3h', ifExists: 'keep' },
    ]);
    expect(second).toMatchObject({ handler: 'h2', version: 1 });
    expect(second.id).not.toBe(first.id);
    expect(kept).toEqual(second);
    expect(await timers.get('a')).toEqual(second);
    expect(await timers.snapshot()).toEqual([second.id]);
    expect(await store.raw.zrange(timers.keys.due(0), 0, '-1', 'WITHSCORES')).toEqual([
      'a',
      String(second.dueAt),
    ]);
    expect(await store.raw.zcard(timers.keys.keys(0))).toBe(1);
  });

  it('applies keep and replace within one batch in order', async () => {
    const timers = store.open();
    const [a, keptA, b] = await timers.scheduleMany([
      { key: 'a', handler: 'h', delay: '1h' },
      { key: 'a', handler: 'h', delay: '1h', ifExists: 'keep' },
      { key: 'b', handler: 'h', delay: '1h' },
    ]);
    expect(keptA).toEqual(a);
    const [b2] = await timers.scheduleMany([{ key: 'b', handler: 'h2', delay: '2h', ifExists: 'replace' }]);
    expect(b2.id).not.toBe(b.id);
    expect(await timers.snapshot()).toEqual(expect.arrayContaining([a.id, b2.id]));
    expect(await timers.check(b.id)).toBe(false);
  });
});
