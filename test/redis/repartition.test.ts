import { SundialKeys, repartition } from '@sundial/redis';
import { refusal, useStore } from './store-fixture';

/** Repartition on one Redis (issue 12 §4): rows, indexes and tombstones move; the old count is fenced off. */
describe('repartition', () => {
  const store = useStore();

  it('moves every row, index entry and tombstone to its partition under the new count', async () => {
    const old = store.open({ prefix: 'rp', partitions: 1 });
    const keys = Array.from({ length: 300 }, (_, n) => `k:${n}`);
    await old.scheduleMany(keys.map((key) => ({ key, handler: 'h', delay: '1h' })));
    await old.schedule({ key: 'paused', handler: 'h', every: '1m' });
    await old.pause('paused');
    await old.schedule({ key: 'gone', handler: 'h', delay: '1h' });
    await old.cancel('gone');
    const before = await old.get('k:7');
    const moved = await old.reschedule('k:9', { delay: 7_200_000 }, { requestId: 'move-k9' });

    const progress: string[] = [];
    const result = await repartition({
      connection: store.url(),
      prefix: 'rp',
      to: 4,
      onProgress: ({ phase }) => progress.push(phase),
    });
    expect(result).toMatchObject({ from: 1, to: 4 });
    expect(progress).toEqual(expect.arrayContaining(['fenced', 'done']));
    expect(await store.raw.get('rp:partitions')).toBe('4');
    expect(await store.raw.exists('rp:repartition')).toBe(0);

    const layout = new SundialKeys('rp', 4);
    for (const key of [...keys, 'paused']) {
      const n = layout.partitionOf(key);
      expect({ key, in: await store.raw.exists(layout.row(key)) }).toEqual({ key, in: 1 });
      expect(await store.raw.zscore(layout.keys(n), key)).toBe('0');
    }
    const leaving = keys.filter((key) => layout.partitionOf(key) !== 0);
    expect(leaving.length).toBeGreaterThan(100);
    expect(await store.raw.zcard('rp:{p0}:due')).toBe(keys.length - leaving.length);
    expect(await store.raw.exists(layout.tombstone('gone'))).toBe(1);

    const client = store.open({ prefix: 'rp', partitions: 4 });
    const after = await client.get('k:7');
    expect(after).toEqual(before);
    expect(await client.check(before!.id)).toBe(true);
    expect((await client.snapshot()).length).toBe(keys.length + 1);
    const listed = await client.list({ limit: 1000 });
    expect(listed.items.length).toBe(keys.length + 1);
    expect((await client.schedule({ key: 'gone', handler: 'h', delay: '1h', ifExists: 'keep' })).status).toBe(
      'cancelled',
    );
    expect(await client.cancel('k:7')).toBe(true);
    // A caller's retry after the repartition answers as its first try did (not a second reschedule).
    const retried = await client.reschedule('k:9', { delay: 7_200_000 }, { requestId: 'move-k9' });
    expect(retried).toEqual(moved);

    // The client with the old count: its writes are refused by the fence, its misses say why.
    const write = await refusal(old.schedule({ key: 'new', handler: 'h', delay: '1h' }));
    expect(write).toMatchObject({ reason: 'unavailable', field: 'partitions' });
    expect(write.fix).toContain('SUNDIAL_PARTITIONS=4');
    expect(await refusal(old.get('k:9'))).toMatchObject({ field: 'partitions' });
    expect(await refusal(store.open({ prefix: 'rp', partitions: 1 }).get('k:1'))).toMatchObject({
      reason: 'invalid',
      field: 'partitions',
    });
  });

  it("moves the ledgers (a removed timer's too, with its TTL) and the run and slot policy fields", async () => {
    const old = store.open({ prefix: 'rl', partitions: 1 });
    const layout = new SundialKeys('rl', 4);
    // keys that leave partition 0 under 4 partitions
    const [live, removed, closed] = Array.from({ length: 40 }, (_, n) => `l:${n}`).filter(
      (key) => layout.partitionOf(key) !== 0,
    );
    const policies = {
      cron: '0 * * * *',
      tz: 'UTC',
      jitter: '5m',
      catchup: 'skip',
      endAt: Date.now() + 86_400_000,
      overlap: 'buffer-one',
      retry: { attempts: 3 },
      pauseAfterFailures: 2,
    } as const;
    await old.schedule({ key: live, handler: 'h', ...policies });
    await old.pause(live);
    await old.resume(live);
    await old.schedule({ key: removed, handler: 'h', delay: '1h' });
    await old.cancel(removed);
    // a ledger with no row nor tombstone left (as a timer removed when it finished leaves it)
    await store.raw.del(`rl:{p0}:x:${removed}`);
    // a closed ledger (a one-shot removed on completion, includes/ledger.lua), oldest entry first
    const entries = ['scheduled', 'armed', 'claimed', 'completed'].map((e, a) =>
      JSON.stringify({ a, e, v: 1 }),
    );
    await store.raw.set(`rl:{p0}:hd:${closed}`, entries.join('\n'), 'PX', 3_600_000);
    const [timer, liveHistory, removedHistory, closedHistory] = [
      await old.get(live),
      await old.history(live),
      await old.history(removed),
      await old.history(closed),
    ];
    expect(closedHistory.map((entry) => entry.event)).toEqual(['completed', 'claimed', 'armed', 'scheduled']);
    expect(liveHistory.map((entry) => entry.event)).toEqual(['resumed', 'paused', 'scheduled']);
    const ttl = await store.raw.pttl(`rl:{p0}:h:${removed}`);
    expect(ttl).toBeGreaterThan(0);

    await repartition({ connection: store.url(), prefix: 'rl', to: 4 });
    const client = store.open({ prefix: 'rl', partitions: 4 });
    expect(await client.get(live)).toEqual(timer);
    expect(await client.history(live)).toEqual(liveHistory);
    expect(await client.history(removed)).toEqual(removedHistory);
    expect(await client.history(closed)).toEqual(closedHistory);
    expect(await store.raw.pttl(layout.ledger(closed))).toBeGreaterThan(3_600_000 - 60_000);
    expect(await store.raw.pttl(layout.ledger(removed))).toBeGreaterThan(ttl - 60_000);
    expect(await store.raw.pttl(layout.ledger(live))).toBe(-1);
    expect(await store.raw.keys('rl:{p0}:*h:*')).toEqual([]);
    expect(await store.raw.keys('rl:{p0}:*hd:*')).toEqual([]);
  });

  it("moves a cancelAll's entries with the key: written to its ledger, the call's record stays behind", async () => {
    const old = store.open({ prefix: 'rc', partitions: 1 });
    const layout = new SundialKeys('rc', 4);
    const [leaving, staying] = [
      Array.from({ length: 40 }, (_, n) => `c:${n}`).find((key) => layout.partitionOf(key) !== 0)!,
      Array.from({ length: 40 }, (_, n) => `c:${n}`).find((key) => layout.partitionOf(key) === 0)!,
    ];
    await old.schedule({ key: leaving, handler: 'h', delay: '1h' });
    await old.schedule({ key: staying, handler: 'h', delay: '1h' });
    expect(await old.cancelAll('c:')).toBe(2);
    const [leavingHistory, stayingHistory] = [await old.history(leaving), await old.history(staying)];
    expect(leavingHistory.map(({ event, reason }) => [event, reason])).toEqual([
      ['cancelled', 'cancelled'],
      ['scheduled', undefined],
    ]);

    await repartition({ connection: store.url(), prefix: 'rc', to: 4 });
    const client = store.open({ prefix: 'rc', partitions: 4 });
    expect(await client.history(leaving)).toEqual(leavingHistory);
    expect(await client.history(staying)).toEqual(stayingHistory);
    const tombstoneEnd = await store.raw.pexpiretime(layout.tombstone(leaving));
    expect(await store.raw.pexpiretime(layout.ledger(leaving))).toBeGreaterThanOrEqual(tombstoneEnd - 60_000);
  });

  it('refuses a bad count, the same count, and another repartition under way', async () => {
    const client = store.open({ prefix: 'rq', partitions: 2 });
    await client.schedule({ key: 'a', handler: 'h', delay: '1h' });
    const connection = store.url();
    for (const to of [0, 1.5, Number.NaN, 5000]) {
      expect(await refusal(repartition({ connection, prefix: 'rq', to }))).toMatchObject({
        reason: 'invalid',
        field: 'to',
      });
    }
    expect(await refusal(repartition({ connection, prefix: 'rq', to: 2 }))).toMatchObject({ field: 'to' });
    await store.raw.set('rq:repartition', JSON.stringify({ from: 2, to: 3, state: 'moving', startedAt: 1 }));
    const busy = await refusal(repartition({ connection, prefix: 'rq', to: 5 }));
    expect(busy.message).toContain('from 2 to 3');
    // the same target resumes it
    expect(await repartition({ connection, prefix: 'rq', to: 3 })).toMatchObject({ from: 2, to: 3 });
    expect((await store.open({ prefix: 'rq', partitions: 3 }).get('a'))?.key).toBe('a');
  });

  // A cut after the first write was sent must not say "the call changed nothing": the write (its reply
  // lost) may have been applied, and a repartition under way stays so until it is run again.
  it('a repartition Redis stops answering at its first write says it may have changed something; run again, it ends', async () => {
    const client = store.open({ prefix: 'rcut', partitions: 1 });
    await client.scheduleMany(['a', 'b', 'c', 'd'].map((key) => ({ key, handler: 'h', delay: '1h' })));
    const connection = store.url();
    // reads go on under a WRITE pause: the layout is read, the claim's SET NX waits past the bound
    await store.raw.call('CLIENT', 'PAUSE', '10000', 'WRITE'); // deadline: UNPAUSEd as soon as the cut is answered
    const cut = await refusal(repartition({ connection, prefix: 'rcut', to: 2, commandTimeoutMs: 300 }));
    await store.raw.call('CLIENT', 'UNPAUSE');
    expect(cut).toMatchObject({ reason: 'unavailable', detail: { code: 'repartition-cut' } });
    expect(cut.message).toContain('after its first write: it may have changed something');
    expect(cut.message).not.toContain('changed nothing');
    expect(cut.fix).toContain('--to 2');
    expect(await repartition({ connection, prefix: 'rcut', to: 2 })).toMatchObject({ from: 1, to: 2 });
    expect((await store.open({ prefix: 'rcut', partitions: 2 }).get('c'))?.key).toBe('c');
  });
});
