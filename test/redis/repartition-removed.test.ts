import { silentLogger, type TimerContext, type TimerSpec } from '@sundial/core';
import { Dispatcher, repartition, SundialKeys, TimerRunner } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { Queue } from 'bullmq';
import { keysUnder, refusal, useStore } from './store-fixture';

/**
 * What a repartition to fewer partitions leaves of the ones the new count does not have: only their
 * layout fences. Their spent keys and BullMQ queues go; anything that still means something stays.
 */
describe('repartition: the removed partitions', () => {
  const store = useStore();
  const closing: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const close of closing.splice(0).reverse()) await close();
  });

  /** An in-process dispatcher and runner of `partitions`; resolves their close. */
  const fire = async (prefix: string, partitions: number, ran: string[]) => {
    const shared = { connection: store.url(), prefix, partitions, logger: silentLogger };
    const dispatcher = new Dispatcher(shared);
    // a lease longer than the test: BullMQ's stalled check writes nothing again while it runs
    const runner = new TimerRunner({
      ...shared,
      leaseMs: 120_000,
      handlers: { h: (_payload: unknown, ctx: TimerContext) => void ran.push(ctx.key) },
    });
    await dispatcher.start();
    await runner.start();
    const close = async () => {
      await dispatcher.close();
      await runner.close(1000);
    };
    closing.push(close);
    return close;
  };

  const names = async (prefix: string) =>
    (await keysUnder(store.raw, prefix)).filter((name) => !/:[txh]:/.test(name));

  it('4 → 2: only the removed partitions’ layout fences stay; timers fire; a second run is harmless', async () => {
    const ran: string[] = [];
    const stopOld = await fire('rr', 4, ran);
    const old = store.open({ prefix: 'rr', partitions: 4 });
    const soon = Array.from({ length: 20 }, (_, n) => `soon:${n}`);
    await old.scheduleMany(soon.map((key) => ({ key, handler: 'h', delay: 50 })));
    const later = await old.scheduleMany(
      Array.from({ length: 20 }, (_, n) => ({ key: `later:${n}`, handler: 'h', delay: '1h' })),
    );
    await old.schedule({ key: 'gone', handler: 'h', delay: '1h' });
    await old.cancel('gone', { requestId: 'cancel-gone' });
    await waitFor(() => ran.length >= soon.length, { timeoutMs: 20_000, what: 'the first runs' });
    const before = await names('rr');
    expect(before).toEqual(
      expect.arrayContaining(['rr:sundial-fire-{p3}:meta', 'rr:{p3}:seq', 'rr:{p3}:keys']),
    );

    const result = await repartition({ connection: store.url(), prefix: 'rr', to: 2 });
    await stopOld();
    expect(result).toMatchObject({ from: 4, to: 2, left: [] });
    expect(result.removed).toBeGreaterThan(0);
    const after = await names('rr');
    const removed = after.filter((name) => /\{p[23]\}/.test(name));
    expect(removed).toEqual(['rr:{p2}:layout', 'rr:{p3}:layout']);
    // the partitions that stay keep their queues and keys
    expect(after).toEqual(
      expect.arrayContaining(['rr:sundial-fire-{p1}:meta', 'rr:{p1}:seq', 'rr:{p0}:keys']),
    );
    const rows = (await keysUnder(store.raw, 'rr')).filter((name) => /:[tx]:/.test(name));
    expect(rows.every((name) => /\{p[01]\}/.test(name))).toBe(true);
    expect(rows).toHaveLength(later.length + 1);

    // a second run is refused (the count is already 2) and changes nothing
    expect(await refusal(repartition({ connection: store.url(), prefix: 'rr', to: 2 }))).toMatchObject({
      field: 'to',
    });
    // a run that died before its record went is resumed: the rest is deleted once, nothing else
    await store.raw.set('rr:repartition', JSON.stringify({ from: 4, to: 2, state: 'moving', startedAt: 1 }));
    expect(await repartition({ connection: store.url(), prefix: 'rr', to: 2 })).toMatchObject({
      moved: 0,
      removed: 0,
      left: [],
    });
    expect(await names('rr')).toEqual(after);

    // the timers fire under the new count; the old count's writes are still refused
    await fire('rr', 2, ran);
    const client = store.open({ prefix: 'rr', partitions: 2 });
    for (const { key } of later) await client.reschedule(key, { delay: 50 });
    await waitFor(() => ran.length >= soon.length + later.length, {
      timeoutMs: 20_000,
      what: 'the moved runs',
    });
    expect(ran.slice(soon.length).sort()).toEqual(later.map(({ key }) => key).sort());
    expect(await refusal(old.schedule({ key: 'later:3', handler: 'h', delay: '1h' }))).toMatchObject({
      reason: 'unavailable',
      field: 'partitions',
    });
  }, 60_000);

  it('2 → 4 → 2 keeps every row and tombstone (the ids moved in before are forgotten)', async () => {
    const client = store.open({ prefix: 'rb', partitions: 2 });
    const timers = await client.scheduleMany(
      Array.from({ length: 40 }, (_, n) => ({ key: `k:${n}`, handler: 'h', delay: '1h' })),
    );
    await client.schedule({ key: 'gone', handler: 'h', delay: '1h' });
    await client.cancel('gone');
    for (const to of [4, 2]) await repartition({ connection: store.url(), prefix: 'rb', to });

    const back = store.open({ prefix: 'rb', partitions: 2 });
    for (const timer of timers) expect(await back.get(timer.key)).toEqual(timer);
    expect((await back.schedule({ key: 'gone', handler: 'h', delay: '1h', ifExists: 'keep' })).status).toBe(
      'cancelled',
    );
    expect((await names('rb')).filter((name) => /\{p[23]\}|fire-\{p[23]\}/.test(name))).toEqual([
      'rb:{p2}:layout',
      'rb:{p3}:layout',
    ]);
  });

  it("matches its prefix as written: a prefix with '*' leaves another prefix's keys alone", async () => {
    const spec = (key: string): TimerSpec => ({ key, handler: 'h', delay: '1h' });
    const keys = Array.from({ length: 20 }, (_, n) => `k:${n}`);
    await store.open({ prefix: 'g*', partitions: 4 }).scheduleMany(keys.map(spec));
    const other = store.open({ prefix: 'gx', partitions: 4 });
    await other.scheduleMany(keys.map(spec));
    await other.cancel('k:1');
    const before = await keysUnder(store.raw, 'gx');

    expect(await repartition({ connection: store.url(), prefix: 'g*', to: 2 })).toMatchObject({ left: [] });
    expect(await keysUnder(store.raw, 'gx')).toEqual(before);
    expect((await names('g*')).filter((name) => name.startsWith('g*:') && /\{p[23]\}/.test(name))).toEqual([
      'g*:{p2}:layout',
      'g*:{p3}:layout',
    ]);
  });

  it('leaves a removed partition that still holds a row, and a queue with a fire job, and says so', async () => {
    const client = store.open({ prefix: 'rs', partitions: 4 });
    await client.scheduleMany(
      Array.from({ length: 20 }, (_, n) => ({ key: `k:${n}`, handler: 'h', delay: '1h' })),
    );
    const keys = new SundialKeys('rs', 4);
    await repartition({ connection: store.url(), prefix: 'rs', to: 2 });
    // resumed, as if a row were still in partition 3 and a fire job still queued in partition 2
    await store.raw.set('rs:repartition', JSON.stringify({ from: 4, to: 2, state: 'moving', startedAt: 1 }));
    await store.raw.hset(`${keys.base(3)}t:stray`, { id: '1p3', key: 'stray', s: 'pending' });
    await store.raw.set(`${keys.base(3)}seq`, '9');
    const queue = new Queue(keys.queueName(2), { connection: store.raw, prefix: 'rs' });
    await queue.add('fire', { timers: [] });
    await queue.close();

    const result = await repartition({ connection: store.url(), prefix: 'rs', to: 2 });
    expect(result.left.sort()).toEqual(['rs:sundial-fire-{p2}', 'rs:{p3}:t:stray']);
    expect(await store.raw.get(`${keys.base(3)}seq`)).toBe('9');
    expect(await store.raw.exists(`${keys.base(3)}t:stray`)).toBe(1);
    expect(await store.raw.llen('rs:sundial-fire-{p2}:wait')).toBe(1);
  }, 30_000);
});
