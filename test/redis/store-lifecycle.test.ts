import { nextCronOccurrence, type TimerSpec } from '@sundial/core';
import { redisNow, waitFor } from '@sundial/testing/harness';
import { claim, eventually, keysUnder, record, refusal, useStore } from './store-fixture';

const store = useStore();

/** Where a key sits in the partition indexes. */
async function indexes(timers: ReturnType<typeof store.open>, key: string) {
  const n = timers.keys.partitionOf(key);
  const [due, armed, lease, indexed] = await Promise.all([
    store.raw.zscore(timers.keys.due(n), key),
    store.raw.zscore(timers.keys.armed(n), key),
    store.raw.zscore(timers.keys.leases(n), key),
    store.raw.zscore(timers.keys.keys(n), key),
  ]);
  return {
    due: due && Number(due),
    armed: armed && Number(armed),
    lease: lease !== null,
    indexed: indexed !== null,
  };
}

/** What the dispatcher does when it hands a timer to BullMQ. */
async function markArmed(timers: ReturnType<typeof store.open>, key: string): Promise<void> {
  const n = timers.keys.partitionOf(key);
  const score = await store.raw.zscore(timers.keys.due(n), key);
  await store.raw.multi().zrem(timers.keys.due(n), key).zadd(timers.keys.armed(n), score!, key).exec();
}

describe('cancel', () => {
  it('bumps the version, removes row and index entries, leaves a tombstone with a TTL, emits cancelled', async () => {
    const timers = store.open();
    const events = record(timers, 'cancelled');
    const timer = await timers.schedule({ key: 'k', handler: 'h', delay: '1h' });
    expect(await timers.cancel('k')).toBe(true);
    expect(await timers.get('k')).toBeNull();
    expect(await timers.check(timer.id)).toBe(false);
    expect(await indexes(timers, 'k')).toEqual({ due: null, armed: null, lease: false, indexed: false });
    // besides the first answers of the two calls, remembered for a minute (docs/design.md "Repeated calls")
    const keys = await keysUnder(store.raw, timers.keys.prefix);
    const memos = keys.filter((name) => name.includes(':q:'));
    // the live-id bitmap stays, empty: the partition's next ids land in it (store/live-ids.ts)
    expect(keys.filter((name) => !memos.includes(name))).toEqual([
      timers.keys.ledger('k'),
      timers.keys.idBitmap(0, '0:0'),
      timers.keys.idChunks(0),
      `${timers.keys.base(0)}kt`, // its kept finished rows noted from its first id (cancel-all.lua's count)
      timers.keys.seq(0),
      timers.keys.tombstone('k'),
    ]);
    expect(await store.raw.bitcount(timers.keys.idBitmap(0, '0:0'))).toBe(0);
    expect(memos).toHaveLength(2);
    for (const memo of memos) expect(await store.raw.pttl(memo)).toBeLessThanOrEqual(60_000);
    const ttl = await store.raw.pttl(timers.keys.tombstone('k'));
    expect(ttl).toBeGreaterThan(7 * 86_400_000 - 60_000);
    // the ledger goes with the tombstone
    expect(await store.raw.pttl(timers.keys.ledger('k'))).toBeGreaterThan(7 * 86_400_000 - 60_000);
    expect((await timers.history('k')).map(({ event, version }) => [event, version])).toEqual([
      ['cancelled', 2],
      ['scheduled', 1],
    ]);
    expect(await eventually(events, { key: 'k' })).toMatchObject({
      id: timer.id,
      version: 2,
      reason: 'cancelled',
      kind: 'once',
    });
    expect(await timers.cancel('k')).toBe(false);
    expect(await timers.cancel('never')).toBe(false);
  });

  it('aborts a running timer cluster-wide', async () => {
    const timers = store.open();
    const timer = await timers.schedule({ key: 'k', handler: 'h', delay: 0 });
    await claim(store.raw, timers, timer);
    const aborts: string[] = [];
    const subscriber = store.raw.duplicate();
    subscriber.on('message', (_channel: string, message: string) => aborts.push(message));
    await subscriber.subscribe(timers.keys.abortChannel);
    try {
      expect(await timers.cancel('k')).toBe(true);
      expect(await indexes(timers, 'k')).toEqual({ due: null, armed: null, lease: false, indexed: false });
      await waitFor(() => aborts.length > 0, { what: 'abort message' });
      expect(aborts.map((a) => JSON.parse(a))).toEqual([{ key: 'k', id: timer.id, version: 1 }]);
    } finally {
      await subscriber.quit();
    }
  });
});

describe('cancelAll', () => {
  it('cancels exactly the scope, across partitions, and returns the count', async () => {
    const timers = store.open({ partitions: 3, cancelBatch: 7 });
    const events = record(timers, 'cancelled', 'reset');
    const specs = (prefix: string, n: number) =>
      Array.from({ length: n }, (_, i): TimerSpec => ({ key: `${prefix}${i}`, handler: 'h', delay: '1h' }));
    await timers.scheduleMany([...specs('invoice:', 30), ...specs('invoices', 4), ...specs('user:', 5)]);
    await timers.schedule({ key: 'invoice', handler: 'h', delay: '1h' });

    expect(await timers.cancelAll('invoice:')).toBe(30);
    const left = (await timers.list({ limit: 1000 })).items.map((t) => t.key).sort();
    expect(left).toEqual(
      ['invoice', ...specs('invoices', 4).map((s) => s.key), ...specs('user:', 5).map((s) => s.key)].sort(),
    );
    expect(await timers.cancelAll('nothing:')).toBe(0);
    await eventually(events, { key: 'invoice:29' });
    expect(events.filter((e) => e.type === 'cancelled')).toHaveLength(30);
    expect(events.some((e) => e.type === 'reset')).toBe(false);

    expect(await timers.cancelAll()).toBe(10);
    expect(await timers.snapshot()).toEqual([]);
    expect(await eventually(events, { type: 'reset' })).toMatchObject({ count: 10, kind: null });
    expect(events.filter((e) => e.type === 'cancelled' && e.reason === 'reset')).toHaveLength(10);
  });

  it('cancels 10k timers in bounded batches', async () => {
    const timers = store.open({ partitions: 2, cancelBatch: 1000 });
    for (let i = 0; i < 10; i++) {
      await timers.scheduleMany(
        Array.from({ length: 1000 }, (_, j) => ({ key: `bulk:${i}:${j}`, handler: 'h', delay: '1h' })),
      );
    }
    await timers.schedule({ key: 'other', handler: 'h', delay: '1h' });
    await store.raw.config('RESETSTAT');
    expect(await timers.cancelAll('bulk:')).toBe(10_000);
    // One cancel-all call (FCALL) per batch of ≤ 1000 per partition: ~5000 keys each → at least 10 in all.
    const stats = await store.raw.info('commandstats');
    expect(Number(/cmdstat_fcall:calls=(\d+)/.exec(stats)?.[1] ?? 0)).toBeGreaterThanOrEqual(10);
    expect(await timers.snapshot()).toHaveLength(1);
    expect(await store.raw.zcard(timers.keys.keys(timers.keys.partitionOf('other')))).toBe(1);
  });

  it('leaves a tombstone per cancelled key that ifExists keep honours', async () => {
    const timers = store.open({ cancelBatch: 2 });
    const created = await timers.scheduleMany(
      ['t:1', 't:2', 't:3'].map((key): TimerSpec => ({ key, handler: 'h', payload: { key }, delay: '1h' })),
    );
    expect(await timers.cancelAll('t:')).toBe(3);
    const kept = await timers.scheduleMany(
      created.map(({ key }) => ({ key, handler: 'other', delay: 5, ifExists: 'keep' })),
    );
    expect(kept).toEqual(created.map((timer) => ({ ...timer, status: 'cancelled', version: 2 })));
    expect(await timers.snapshot()).toEqual([]);
    expect(await store.raw.pttl(timers.keys.tombstone('t:2'))).toBeGreaterThan(7 * 86_400_000 - 60_000);
  });

  it('with nobody listening, cancels pending, armed and paused timers and drops a kept finished row uncounted', async () => {
    const timers = store.open({ ledger: 0 });
    const keys = ['a:armed', 'a:done', 'a:due', 'a:paused'];
    const created = await timers.scheduleMany(
      keys.map((key): TimerSpec => ({ key, handler: 'h', delay: '1h' })),
    );
    const n = timers.keys.partitionOf('a:done');
    await markArmed(timers, 'a:armed');
    const paused = await timers.pause('a:paused');
    // a finished row kept by removeOnComplete: false, as docs/design.md "Index membership by status" has it
    // its id `<seq>p<M>` leaves the live ids: bit seq of the first bitmap (store/live-ids.ts)
    const [seq, origin] = created[1].id.split('p').map(Number);
    await store.raw
      .multi()
      .hset(timers.keys.row('a:done'), 's', 'completed')
      .zrem(timers.keys.due(n), 'a:done')
      .setbit(timers.keys.idBitmap(n, `${origin}:0`), seq, 0)
      .exec();

    expect(await timers.cancelAll('a:')).toBe(3);
    expect(await timers.snapshot()).toEqual([]);
    for (const key of keys) {
      expect(await indexes(timers, key)).toEqual({ due: null, armed: null, lease: false, indexed: false });
    }
    expect(await store.raw.exists(timers.keys.row('a:done'), timers.keys.tombstone('a:done'))).toBe(0);
    for (const key of ['a:armed', 'a:due', 'a:paused']) {
      expect(await store.raw.pttl(timers.keys.tombstone(key))).toBeGreaterThan(7 * 86_400_000 - 60_000);
    }
    const kept = await timers.scheduleMany(
      keys.map((key) => ({ key, handler: 'other', delay: 5, ifExists: 'keep' })),
    );
    expect(kept.map(({ key, status, version }) => [key, status, version])).toEqual([
      ['a:armed', 'cancelled', 2],
      ['a:done', 'pending', 1],
      ['a:due', 'cancelled', 2],
      ['a:paused', 'cancelled', paused.version + 1],
    ]);
  });

  it('with nobody listening, still aborts a running timer and writes the cancel into existing ledgers', async () => {
    const timers = store.open();
    const [running] = await timers.scheduleMany(
      ['b:running', 'b:moved', 'b:fresh'].map((key): TimerSpec => ({ key, handler: 'h', delay: 0 })),
    );
    await claim(store.raw, timers, running);
    await timers.reschedule('b:moved', { delay: '2h' });
    const aborts: string[] = [];
    const subscriber = store.raw.duplicate();
    subscriber.on('message', (_channel: string, message: string) => aborts.push(message));
    await subscriber.subscribe(timers.keys.abortChannel);
    try {
      expect(await timers.cancelAll('b:')).toBe(3);
      await waitFor(() => aborts.length > 0, { what: 'abort message' });
      expect(aborts.map((a) => JSON.parse(a))).toEqual([{ key: 'b:running', id: running.id, version: 1 }]);
    } finally {
      await subscriber.quit();
    }
    expect((await timers.history('b:moved'))[0]).toMatchObject({ event: 'cancelled', version: 3 });
    expect(await store.raw.pttl(timers.keys.ledger('b:moved'))).toBeGreaterThan(7 * 86_400_000 - 60_000);
    expect(
      await store.raw.exists(...['b:running', 'b:moved', 'b:fresh'].map((k) => timers.keys.tombstone(k))),
    ).toBe(3);
  });

  it('refuses a bad scope and changes nothing', async () => {
    const timers = store.open();
    await timers.schedule({ key: 'k', handler: 'h', delay: '1h' });
    expect(await refusal(timers.cancelAll('bad scope'))).toMatchObject({
      reason: 'invalid',
      field: 'prefix',
    });
    expect(await timers.snapshot()).toHaveLength(1);
  });
});

describe('reschedule', () => {
  it('keeps the id, bumps the version and moves the arming intent back to due', async () => {
    const timers = store.open();
    const events = record(timers, 'scheduled');
    const timer = await timers.schedule({ key: 'k', handler: 'h', delay: '1h' });
    await markArmed(timers, 'k');
    const moved = await timers.reschedule('k', { delay: '2h' });
    expect(moved).toMatchObject({ id: timer.id, version: 2, status: 'pending', delayMs: 7_200_000 });
    expect(moved.dueAt).toBe(moved.scheduledAt + 7_200_000);
    expect(await indexes(timers, 'k')).toEqual({
      due: moved.dueAt,
      armed: null,
      lease: false,
      indexed: true,
    });
    const at = Date.parse('2030-01-01T00:00:00Z');
    const absolute = await timers.reschedule('k', { at: '2030-01-01T00:00:00Z' });
    expect(absolute).toMatchObject({ version: 3, dueAt: at });
    expect(absolute.delayMs).toBeUndefined();
    expect(await eventually(events, { version: 3 })).toMatchObject({ reason: 'reschedule', due: at });
  });

  it('is refused inactive while running, and not-found without a live timer, changing nothing', async () => {
    const timers = store.open();
    const timer = await timers.schedule({ key: 'k', handler: 'h', delay: 0 });
    await claim(store.raw, timers, timer);
    const running = await timers.get('k');
    expect(running?.status).toBe('running');
    expect(await refusal(timers.reschedule('k', { delay: '1m' }))).toMatchObject({
      reason: 'inactive',
      field: 'key',
    });
    expect(await timers.get('k')).toEqual(running);
    expect(await refusal(timers.reschedule('nope', { delay: '1m' }))).toMatchObject({ reason: 'not-found' });
    expect(await refusal(timers.reschedule('k', { delay: -5 } as never))).toMatchObject({
      reason: 'invalid',
    });
    expect(await timers.get('k')).toEqual(running);
  });
});

describe('pause, resume, trigger', () => {
  it('pause takes the timer out of due and armed; resume puts an interval on its next grid slot', async () => {
    const timers = store.open();
    const timer = await timers.schedule({ key: 'beat', handler: 'h', every: '100ms' });
    await markArmed(timers, 'beat');
    const paused = await timers.pause('beat');
    expect(paused).toMatchObject({ status: 'paused', version: 2 });
    expect(await indexes(timers, 'beat')).toEqual({ due: null, armed: null, lease: false, indexed: true });
    expect(await timers.pause('beat')).toEqual(paused);
    expect(await timers.check(timer.id)).toBe(true);

    // Move the anchor 1 s back: resume must skip the missed slots and land on the grid after now.
    await store.raw.hset(timers.keys.row('beat'), 'sa', String(timer.scheduledAt - 1_000));
    const resumed = await timers.resume('beat');
    const now = await redisNow(store.raw);
    expect(resumed).toMatchObject({ status: 'pending', version: 3 });
    expect((resumed.dueAt - resumed.scheduledAt) % 100).toBe(0);
    expect(resumed.dueAt).toBeGreaterThan(timer.scheduledAt);
    expect(resumed.dueAt - 100).toBeLessThanOrEqual(now);
    expect(await indexes(timers, 'beat')).toMatchObject({ due: resumed.dueAt, armed: null });
    expect(await timers.resume('beat')).toEqual(resumed);
  });

  it('resume finds a cron’s next occurrence from now; a once timer keeps its due', async () => {
    const timers = store.open();
    await timers.schedule({ key: 'c', handler: 'h', cron: '0 7 * * MON-FRI', tz: 'America/Toronto' });
    await timers.pause('c');
    const resumed = await timers.resume('c');
    expect(resumed.dueAt).toBe(nextCronOccurrence('0 7 * * MON-FRI', 'America/Toronto', Date.now()));
    const once = await timers.schedule({ key: 'o', handler: 'h', delay: '1h' });
    await timers.pause('o');
    expect((await timers.resume('o')).dueAt).toBe(once.dueAt);
  });

  it('pause is refused while running; pause/resume/trigger need a live timer', async () => {
    const timers = store.open();
    const timer = await timers.schedule({ key: 'k', handler: 'h', delay: 0 });
    await claim(store.raw, timers, timer);
    expect(await refusal(timers.pause('k'))).toMatchObject({ reason: 'inactive' });
    expect(await refusal(timers.trigger('k'))).toMatchObject({ reason: 'inactive' });
    for (const op of ['pause', 'resume', 'trigger'] as const) {
      expect(await refusal(timers[op]('missing'))).toMatchObject({ reason: 'not-found' });
    }
  });

  it('trigger arms a run now without moving the schedule', async () => {
    const timers = store.open();
    const events = record(timers, 'scheduled');
    const timer = await timers.schedule({ key: 'k', handler: 'h', every: '1h' });
    await markArmed(timers, 'k');
    const triggered = await timers.trigger('k');
    expect(triggered).toMatchObject({ id: timer.id, version: 2, status: 'pending', dueAt: timer.dueAt });
    const tg = Number(await store.raw.hget(timers.keys.row('k'), 'tg'));
    expect(tg).toBeGreaterThanOrEqual(timer.scheduledAt);
    expect(await indexes(timers, 'k')).toEqual({ due: tg, armed: null, lease: false, indexed: true });
    expect(await eventually(events, { version: 2 })).toMatchObject({ reason: 'trigger', due: tg });

    // its run is asked for: until a worker claims and ends it the timer counts as running (docs/spec.md §3.4)
    for (const write of [() => timers.pause('k'), () => timers.trigger('k')])
      expect(await refusal(write())).toMatchObject({ reason: 'inactive', detail: { status: 'running' } });
    expect(Number(await store.raw.hget(timers.keys.row('k'), 'tg'))).toBe(tg);
  });
});
