import { silentLogger, SundialError, type TimerSpec } from '@sundial/core';
import { FireCommands, RedisTimers } from '@sundial/redis';
import { startRedis, waitFor } from '@sundial/testing/harness';
import { claim, eventually, record, refusal, useStore } from './store-fixture';

const store = useStore();

describe('get, list, check, snapshot', () => {
  it('lists by prefix and status, page by page, across partitions', async () => {
    const timers = store.open({ partitions: 3 });
    const specs = Array.from({ length: 25 }, (_, i): TimerSpec => ({
      key: `job:${String(i).padStart(2, '0')}`,
      handler: 'h',
      delay: '1h',
    }));
    const created = await timers.scheduleMany([...specs, { key: 'other', handler: 'h', delay: '1h' }]);
    await timers.pause('job:03');
    await timers.pause('job:17');

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await timers.list({ prefix: 'job:', limit: 4, cursor });
      expect(page.items.length).toBeLessThanOrEqual(4);
      seen.push(...page.items.map((t) => t.key));
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor);
    expect(seen.sort()).toEqual(specs.map((s) => s.key));
    expect(pages).toBeGreaterThanOrEqual(7);

    const paused = await timers.list({ status: 'paused' });
    expect(paused.nextCursor).toBeNull();
    expect(paused.items.map((t) => t.key).sort()).toEqual(['job:03', 'job:17']);
    expect((await timers.list()).items).toHaveLength(26);

    expect(await timers.get('job:05')).toEqual(created[5]);
    expect(await timers.get('absent')).toBeNull();
    expect(await timers.check(created[0].id)).toBe(true);
    expect(await timers.check('999p0')).toBe(false);
    expect(await timers.check('not-an-id')).toBe(false);
    expect((await timers.snapshot()).sort()).toEqual(created.map((t) => t.id).sort());
  });

  it('dueBefore: ties on one due page in key order; a prefix matching little pages on by a bounded scan', async () => {
    const timers = store.open({ partitions: 2 });
    const at = Date.now() + 600_000;
    // 40 timers share one due: pages of 7 cut through the tie and still return each once, in key order.
    const tied = Array.from({ length: 40 }, (_, i) => `tie:${String(i).padStart(2, '0')}`);
    await timers.scheduleMany(tied.map((key) => ({ key, handler: 'h', at })));
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await timers.list({ dueBefore: at, limit: 7, cursor });
      seen.push(...page.items.map((t) => t.key));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(tied);

    // 25,000 timers due before the three with prefix `rare:`: a partition reads at most 10,000 entries a
    // page, so the first pages come back empty with a cursor, and the walk still ends with the three.
    for (let n = 0; n < 25_000; n += 2500) {
      await timers.scheduleMany(
        Array.from({ length: 2500 }, (_, i) => ({ key: `bulk:${n + i}`, handler: 'h', at: at + 1 + n + i })),
      );
    }
    await timers.scheduleMany(
      ['rare:c', 'rare:a', 'rare:b'].map((key, i) => ({ key, handler: 'h', at: at + 30_000 + i })),
    );
    const rare: string[] = [];
    let pages = 0;
    cursor = undefined;
    do {
      const page = await timers.list({ dueBefore: at + 60_000, prefix: 'rare:', cursor });
      rare.push(...page.items.map((t) => t.key));
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor);
    expect(rare).toEqual(['rare:c', 'rare:a', 'rare:b']);
    expect(pages).toBeGreaterThan(1);
  }, 60_000);

  it('a status matching few of many timers pages on by a bounded scan: short pages, every match once', async () => {
    const timers = store.open({ partitions: 1 });
    for (let n = 0; n < 25_000; n += 2500) {
      await timers.scheduleMany(
        Array.from({ length: 2500 }, (_, i) => ({
          key: `many:${String(n + i).padStart(5, '0')}`,
          handler: 'h',
          delay: '1h',
        })),
      );
    }
    for (const key of ['many:00007', 'many:15000', 'many:24999']) await timers.pause(key);
    const paused: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await timers.list({ status: 'paused', limit: 2, cursor });
      paused.push(...page.items.map((t) => t.key));
      cursor = page.nextCursor ?? undefined;
      pages++;
    } while (cursor);
    expect(paused).toEqual(['many:00007', 'many:15000', 'many:24999']);
    // 25,000 keys at 10,000 a call: at least three calls, some of them short.
    expect(pages).toBeGreaterThanOrEqual(3);
  }, 60_000);

  it('refuses bad list options', async () => {
    const timers = store.open();
    expect(await refusal(timers.list({ limit: 0 }))).toMatchObject({ reason: 'invalid', field: 'limit' });
    expect(await refusal(timers.list({ cursor: 'garbage' }))).toMatchObject({
      reason: 'invalid',
      field: 'cursor',
    });
    expect(await refusal(timers.list({ status: 'sleeping' as never }))).toMatchObject({
      reason: 'invalid',
      field: 'status',
    });
    expect(await refusal(timers.get('bad key'))).toMatchObject({ reason: 'invalid', field: 'key' });
  });

  it('shows a finished row kept by removeOnComplete: false, which is not live and cancel just drops', async () => {
    const timers = store.open();
    const timer = await timers.schedule({ key: 'k', handler: 'h', delay: 0, removeOnComplete: false });
    await claim(store.raw, timers, timer);
    const fire = new FireCommands(store.raw, timers.keys);
    const done = await fire.complete(0, [
      { id: timer.id, key: 'k', version: 1, runCount: 1, mode: 'held', outcome: 'ok', missed: 0, overlap: 0 },
    ]);
    expect(done).toEqual([{ kind: 'done', missed: 0, overlap: 0 }]);
    expect(await timers.get('k')).toMatchObject({ status: 'completed', runCount: 1 });
    expect((await timers.list({ status: 'completed' })).items.map((t) => t.key)).toEqual(['k']);
    expect(await timers.check(timer.id)).toBe(false);
    // Not live: a new schedule with ifExists error takes the key over.
    expect(await timers.cancel('k')).toBe(false);
    expect(await timers.get('k')).toBeNull();
    expect(await store.raw.exists(timers.keys.tombstone('k'))).toBe(0);
  });

  it('check and snapshot read live ids across id bitmaps; a bitmap left empty behind the counter goes', async () => {
    const timers = store.open();
    const first = await timers.schedule({ key: 'a', handler: 'h', delay: '1h' });
    // the next ids land in the second bitmap (store/live-ids.ts ID_CHUNK = 65536 ids each)
    await store.raw.set(timers.keys.seq(0), 70_000);
    const [second, third] = await timers.scheduleMany([
      { key: 'b', handler: 'h', delay: '1h' },
      { key: 'c', handler: 'h', delay: '1h' },
    ]);
    expect([first.id, second.id, third.id]).toEqual(['1p0', '70001p0', '70002p0']);
    expect((await timers.snapshot()).sort()).toEqual(['1p0', '70001p0', '70002p0']);
    expect(await timers.check('70001p0')).toBe(true);
    expect(await timers.check('70003p0')).toBe(false);
    expect(await timers.check('1p7')).toBe(false);

    expect(await timers.cancel('a')).toBe(true);
    expect(await timers.check('1p0')).toBe(false);
    expect(await store.raw.exists(timers.keys.idBitmap(0, '0:0'))).toBe(0);
    expect(await store.raw.smembers(timers.keys.idChunks(0))).toEqual(['0:1']);
    // the bitmap new ids land in stays, even empty
    await timers.cancelAll();
    expect(await timers.snapshot()).toEqual([]);
    expect(await store.raw.smembers(timers.keys.idChunks(0))).toEqual(['0:1']);
  });

  it('cancelAll clears exactly its ids: neighbours in the same bytes and far apart in a bitmap stay live', async () => {
    const timers = store.open();
    // ids 1..48 alternate between the scope and the rest: every byte of the bitmap holds both (one
    // read-modify-write of the bytes); then two ids of the scope far apart in the next bitmap (BITFIELD)
    const near = await timers.scheduleMany(
      Array.from({ length: 48 }, (_, i): TimerSpec => ({
        key: `${i % 2 ? 'y' : 'x'}:${i}`,
        handler: 'h',
        delay: '1h',
      })),
    );
    const far: string[] = [];
    for (const [seq, key] of [
      [70_000, 'x:far1'],
      [100_000, 'y:far'],
      [130_000, 'x:far2'],
    ] as const) {
      await store.raw.set(timers.keys.seq(0), seq);
      far.push((await timers.schedule({ key, handler: 'h', delay: '1h' })).id);
    }
    expect(far).toEqual(['70001p0', '100001p0', '130001p0']);

    expect(await timers.cancelAll('x:')).toBe(26);
    const kept = [...near.filter((t) => t.key.startsWith('y:')).map((t) => t.id), '100001p0'];
    expect((await timers.snapshot()).sort()).toEqual(kept.sort());
    for (const timer of near) expect(await timers.check(timer.id)).toBe(timer.key.startsWith('y:'));
    expect(await timers.check('70001p0')).toBe(false);
    expect(await timers.check('130001p0')).toBe(false);
    expect(await timers.cancelAll('y:')).toBe(25);
    expect(await timers.snapshot()).toEqual([]);
  });

  it('places ids past 2^32 in their bitmap: check, cancelAll and the kept bitmap agree on its name', async () => {
    const timers = store.open();
    await store.raw.set(timers.keys.seq(0), 5_000_000_000);
    const [a, b] = await timers.scheduleMany([
      { key: 'a', handler: 'h', delay: '1h' },
      { key: 'b', handler: 'h', delay: '1h' },
    ]);
    expect([a.id, b.id]).toEqual(['5000000001p0', '5000000002p0']);
    const chunk = `0:${Math.floor(5_000_000_001 / 65_536)}`;
    expect(await store.raw.getbit(timers.keys.idBitmap(0, chunk), 5_000_000_001 % 65_536)).toBe(1);
    expect(await timers.check(a.id)).toBe(true);

    expect(await timers.cancelAll()).toBe(2);
    expect(await timers.check(a.id)).toBe(false);
    expect(await timers.check(b.id)).toBe(false);
    // the bitmap the next ids land in stays, even empty: the clearing named it as the counter does
    expect(await store.raw.smembers(timers.keys.idChunks(0))).toEqual([chunk]);
  });
});

describe('events', () => {
  it('reaches every client on the prefix; a throwing listener breaks nothing; unsubscribe stops delivery', async () => {
    const writer = store.open();
    const reader = store.open({ prefix: writer.keys.prefix });
    const seen = record(reader, 'scheduled');
    const stopped: string[] = [];
    const off = reader.on('scheduled', (event) => stopped.push(event.key));
    reader.on('scheduled', () => {
      throw new Error('listener bug');
    });
    await reader.snapshot(); // the subscription is up once a call returns

    await writer.schedule({ key: 'a', handler: 'h', delay: '1h' });
    await eventually(seen, { key: 'a' });
    off();
    await writer.schedule({ key: 'b', handler: 'h', delay: '1h' });
    await eventually(seen, { key: 'b' });
    expect(stopped).toEqual(['a']);
    expect(store.logs.filter((l) => l.level === 'error')).toHaveLength(2);
  });

  it('encodes one event per call while nobody listens; a channel or pattern subscriber gets every one', async () => {
    const timers = store.open();
    const callsOf = (stats: string, command: string) =>
      Number(new RegExp(`cmdstat_${command}:calls=(\\d+)`).exec(stats)?.[1] ?? 0);
    await timers.schedule({ key: 'first', handler: 'h', delay: '1h' }); // wakes the dispatchers once
    await store.raw.config('RESETSTAT');
    const later = Array.from({ length: 20 }, (_, i) => ({
      key: `later.${i}`,
      handler: 'h',
      delay: '2h' as const,
    }));
    await timers.scheduleMany(later); // one call: its first event finds no receiver, the other 19 are not built
    await timers.cancel('later.0');
    const stats = await store.raw.info('commandstats');
    expect(callsOf(stats, 'publish')).toBe(2);
    // Whether anyone listens is learnt from that PUBLISH's answer: the server is asked nothing else.
    expect(callsOf(stats, 'pubsub\\|numsub')).toBe(0);
    expect(callsOf(stats, 'info')).toBe(0);

    const pattern = store.raw.duplicate();
    try {
      const heard: string[] = [];
      pattern.on('pmessage', (_pattern: string, _channel: string, message: string) => heard.push(message));
      await pattern.psubscribe(`${timers.keys.prefix}:ev*`);
      await timers.schedule({ key: 'heard', handler: 'h', delay: '3h' });
      await waitFor(() => heard.length === 1, { what: 'the pattern subscriber' });
      expect(JSON.parse(heard[0])).toMatchObject({ type: 'scheduled', key: 'heard' });
    } finally {
      await pattern.quit();
    }
    const events = record(timers, 'cancelled');
    await timers.snapshot(); // the subscription is up once a call returns
    await timers.cancel('heard');
    expect(await eventually(events, { key: 'heard' })).toMatchObject({ reason: 'cancelled' });
  });

  it('dispose emits disposed locally, then every call is refused', async () => {
    const timers = store.open();
    const events = record(timers, 'disposed');
    await timers.schedule({ key: 'k', handler: 'h', delay: '1h' });
    await timers.dispose();
    expect(events).toEqual([expect.objectContaining({ type: 'disposed' })]);
    expect(await refusal(timers.get('k'))).toMatchObject({ reason: 'disposed' });
    expect(() => timers.on('scheduled', () => undefined)).toThrow(SundialError);
    await timers.dispose(); // twice is fine
    // The timer itself lives on: dispose of a Redis client stops this process, not the cluster.
    expect(await store.open({ prefix: timers.keys.prefix }).get('k')).toMatchObject({ status: 'pending' });
  });
});

describe('Redis health', () => {
  it('warns when Redis may evict, and maps an unreachable Redis to unavailable', async () => {
    const server = await startRedis({ args: ['--maxmemory-policy', 'allkeys-lru'] });
    const timers = new RedisTimers({
      connection: server.url,
      logger: { ...silentLogger, warn: (message) => store.logs.push({ level: 'warn', message }) },
    });
    try {
      await timers.schedule({ key: 'k', handler: 'h', delay: '1h' });
      expect(store.logs).toEqual([
        expect.objectContaining({ level: 'warn', message: expect.stringMatching(/noeviction/) }),
      ]);
      await server.stop();
      const error = await refusal(timers.get('k'));
      expect(error).toMatchObject({ reason: 'unavailable' });
      expect(error.fix).toMatch(/Redis/);
    } finally {
      await timers.dispose();
      await server.stop();
    }
  });
});
