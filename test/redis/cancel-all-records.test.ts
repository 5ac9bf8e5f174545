/**
 * cancelAll through scope records (RedisTimers `cancelAllRecords`, docs/design.md "The cancelAll scope
 * record"): the call marks its keys and answers their count; every read and write of a covered key sees it
 * cancelled before the sweep reaches it; the sweep leaves what a per-key cancel leaves.
 */
import { repartition, SundialKeys } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { story, useFirePath } from './fire-fixture';
import { scopeRecordCalls } from './scope-record-calls';

const fire = useFirePath();
const { recordsLeft, cancelAllCall } = scopeRecordCalls(fire);

describe('cancelAll with scope records on Redis', () => {
  it('marked and never swept: each script and read that meets a covered key settles or skips it', async () => {
    const cluster = await fire.cluster();
    const { timers } = cluster;
    const soon = (await cluster.redisNow()) + 300;
    for (const key of ['m:a', 'm:b', 'm:c', 'm:d', 'm:e'])
      await timers.schedule({ key, handler: 'h', delay: '1h' });
    await timers.schedule({ key: 'm:due', handler: 'h', at: soon });
    const [count, more, , rid] = await cancelAllCall(cluster, 'mark', 'm:');
    expect([count, more]).toEqual(['6', '0']);
    // reads: cancelled at once
    expect(await timers.get('m:a')).toBeNull();
    expect((await timers.list({ prefix: 'm:' })).items).toEqual([]);
    expect(story(await timers.history('m:b'))).toEqual([
      ['scheduled', 1],
      ['cancelled', 2, 'cancelled'],
    ]);
    // writes: the key's row is cancelled first (its tombstone), then the write meets no live row
    await expect(timers.pause('m:c')).rejects.toMatchObject({ reason: 'not-found' });
    expect(await fire.raw.exists(timers.keys.tombstone('m:c'))).toBe(1);
    expect(await timers.cancel('m:d')).toBe(false);
    expect((await timers.schedule({ key: 'm:e', handler: 'h', delay: '1h', ifExists: 'keep' })).status).toBe(
      'cancelled',
    );
    // the fire path: a covered due timer is not handed off, so it never runs
    const runs: string[] = [];
    await cluster.runner({ h: (_payload, ctx) => void runs.push(ctx.key) });
    await cluster.dispatcher();
    await waitFor(async () => (await cluster.redisNow()) > soon + 500, { timeoutMs: 5_000 }); // deadline
    expect(runs).toEqual([]);
    // the sweep settles what is left and drops the record
    const [, swept, , sweptRecord] = await cancelAllCall(cluster, 'sweep', '');
    expect(sweptRecord).toBe(rid);
    expect(swept).toBe('0');
    expect(await recordsLeft(cluster.prefix)).toBe(0);
    for (const key of ['m:a', 'm:due']) expect(await fire.raw.exists(timers.keys.tombstone(key))).toBe(1);
    const cancelled = cluster.events.filter(({ type }) => type === 'cancelled').map(({ key }) => key);
    await waitFor(() => cluster.events.filter(({ type }) => type === 'cancelled').length === 6, {
      timeoutMs: 5_000, // a deadline, left as soon as the events came
    });
    expect(cancelled.length).toBeLessThanOrEqual(6);
    expect(runs).toEqual([]);
  });

  it('a record whose client never swept is swept by the reconciler, a batch a pass', async () => {
    const cluster = await fire.cluster();
    const { timers } = cluster;
    for (const key of ['z:1', 'z:2', 'z:3']) await timers.schedule({ key, handler: 'h', delay: '1h' });
    expect((await cancelAllCall(cluster, 'mark', 'z:'))[0]).toBe('3');
    const reconciler = cluster.reconciler({ batchLimit: 2 });
    await reconciler.reconcileOnce();
    expect(await recordsLeft(cluster.prefix)).toBe(2); // one key left: the record and its set
    await reconciler.reconcileOnce();
    expect(await recordsLeft(cluster.prefix)).toBe(0);
    for (const key of ['z:1', 'z:2', 'z:3'])
      expect(await fire.raw.exists(timers.keys.tombstone(key))).toBe(1);
  });

  it('a repartition settles an open record before it moves the keys', async () => {
    const cluster = await fire.cluster();
    const { timers } = cluster;
    for (const key of ['p:1', 'p:2']) await timers.schedule({ key, handler: 'h', delay: '1h' });
    await timers.schedule({ key: 'q:1', handler: 'h', delay: '1h' });
    expect((await cancelAllCall(cluster, 'mark', 'p:'))[0]).toBe('2');
    await repartition({ connection: fire.url(), prefix: cluster.prefix, to: 2 });
    expect(await recordsLeft(cluster.prefix)).toBe(0);
    const moved = await fire.cluster({ partitions: 2, prefix: cluster.prefix });
    expect(await moved.timers.get('p:1')).toBeNull();
    expect(story(await moved.timers.history('p:2'))).toEqual([
      ['scheduled', 1],
      ['cancelled', 2, 'cancelled'],
    ]);
    expect((await moved.timers.list()).items.map(({ key }) => key)).toEqual(['q:1']);
  });

  it('a kept finished row a repartition moves is noted where it lands (the count reads statuses there)', async () => {
    const cluster = await fire.cluster({ partitions: 2 });
    const { timers } = cluster;
    const [kept, live] = ['f:1', 'f:2', 'f:3', 'f:4', 'f:5', 'f:6', 'f:7', 'f:8'].filter(
      (name) => timers.keys.partitionOf(name) === 1,
    );
    const other = ['g:1', 'g:2', 'g:3', 'g:4'].find((name) => timers.keys.partitionOf(name) === 0)!;
    for (const key of [kept, live, other]) await timers.schedule({ key, handler: 'h', delay: '1h' });
    await fire.raw.hset(timers.keys.row(kept), 's', 'completed'); // kept finished, as a release before wrote it
    const into = new SundialKeys(cluster.prefix, 1);
    // {p0} stays: noted since its first id (`kt`), it now holds a kept finished row it did not write
    expect(await fire.raw.exists(`${into.base(0)}kt`)).toBe(1);
    await repartition({ connection: fire.url(), prefix: cluster.prefix, to: 1 });
    expect(await fire.raw.hget(into.row(kept), 's')).toBe('completed');
    expect(await fire.raw.smembers(`${into.base(0)}kr`)).toEqual([kept]);
    const moved = await fire.cluster({ partitions: 1, prefix: cluster.prefix, cancelAllRecords: true });
    expect(await moved.timers.cancelAll('f:')).toBe(1);
  });

  it('answers the live count, and a covered key reads and writes as cancelled before its sweep', async () => {
    const cluster = await fire.cluster({ cancelAllRecords: true });
    const { timers } = cluster;
    await timers.scheduleMany(
      Array.from({ length: 30 }, (_, i) => ({ key: `s:${i}`, handler: 'h', delay: '1h' })),
    );
    await timers.schedule({ key: 'other', handler: 'h', delay: '1h' });
    expect(await timers.cancelAll('s:')).toBe(30);
    // Every read of a key the record covers, swept or not, answers as a cancel would have.
    expect(await timers.get('s:7')).toBeNull();
    expect((await timers.list({ prefix: 's:' })).items).toEqual([]);
    expect(story(await timers.history('s:8'))).toEqual([
      ['scheduled', 1],
      ['cancelled', 2, 'cancelled'],
    ]);
    // A covered key scheduled again with ifExists 'error' is new (its old row was cancelled by the call).
    expect((await timers.schedule({ key: 's:9', handler: 'h', delay: '1h' })).version).toBe(1);
    expect(await timers.cancel('s:10')).toBe(false);
    await waitFor(async () => (await recordsLeft(cluster.prefix)) === 0, {
      timeoutMs: 5_000, // a deadline, left as soon as the sweep ends
    });
    // Swept: the tombstones a per-key cancel leaves, one `cancelled` event per key, `other` untouched.
    expect(await fire.raw.exists(timers.keys.tombstone('s:20'))).toBe(1);
    expect(await timers.get('other')).not.toBeNull();
    await waitFor(() => cluster.events.filter((event) => event.type === 'cancelled').length === 30, {
      timeoutMs: 5_000, // a deadline, left as soon as the events came
    });
    expect(story(await timers.history('s:20'))).toEqual([
      ['scheduled', 1],
      ['cancelled', 2, 'cancelled'],
    ]);
    expect((await timers.list({ prefix: 's:' })).items.map(({ key }) => key)).toEqual(['s:9']);
  });

  it('a second cancelAll over an unswept record counts only the keys live since', async () => {
    const cluster = await fire.cluster({ cancelAllRecords: true });
    const { timers } = cluster;
    await timers.scheduleMany(
      Array.from({ length: 5 }, (_, i) => ({ key: `d:${i}`, handler: 'h', delay: '1h' })),
    );
    const [first, second] = await Promise.all([timers.cancelAll('d:'), timers.cancelAll('')]);
    expect(first + second).toBe(5);
    await timers.schedule({ key: 'd:1', handler: 'h', delay: '1h' });
    expect(await timers.cancelAll()).toBe(1);
  });

  it('a kept finished row is dropped, not counted', async () => {
    const cluster = await fire.cluster({ cancelAllRecords: true });
    const { timers } = cluster;
    await cluster.runner({ h: () => undefined });
    await cluster.dispatcher();
    await timers.schedule({ key: 'k:done', handler: 'h', delay: 10, removeOnComplete: false });
    await timers.schedule({ key: 'k:live', handler: 'h', delay: '1h' });
    await waitFor(async () => (await timers.get('k:done'))?.status === 'completed', {
      timeoutMs: 5_000, // a deadline, left as soon as it ran
    });
    expect(await timers.cancelAll('k:')).toBe(1);
    await waitFor(async () => (await recordsLeft(cluster.prefix)) === 0, {
      timeoutMs: 5_000, // a deadline, left as soon as the sweep ends
    });
    expect(await fire.raw.exists(timers.keys.row('k:done'))).toBe(0);
  });

  it('the count reads each row only where a kept finished row may be: noted since the first id, or not', async () => {
    const cluster = await fire.cluster({ cancelAllRecords: true });
    const { timers } = cluster;
    for (const key of ['n:1', 'n:2', 'n:3']) await timers.schedule({ key, handler: 'h', delay: '1h' });
    const base = timers.keys.base(0);
    expect(await fire.raw.exists(`${base}kt`)).toBe(1); // noted from the partition's first id
    expect(await fire.raw.exists(`${base}kr`)).toBe(0);
    // A kept finished row a release before the note wrote: not in `kr`, and the partition's note gone.
    await fire.raw.hset(timers.keys.row('n:2'), 's', 'completed');
    await fire.raw.del(`${base}kt`);
    expect(await timers.cancelAll('n:')).toBe(2);
  });

  it('a running timer is cancelled before the call answers: its signal aborts', async () => {
    const cluster = await fire.cluster({ cancelAllRecords: true });
    const { timers } = cluster;
    let aborted = false;
    let started = false;
    await cluster.runner({
      h: async (_payload, ctx) => {
        started = true;
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve()));
        aborted = true;
      },
    });
    await cluster.dispatcher();
    await timers.schedule({ key: 'r:1', handler: 'h', delay: 10 });
    await waitFor(() => started, { timeoutMs: 5_000 }); // deadline
    expect((await timers.get('r:1'))?.status).toBe('running');
    expect(await timers.cancelAll('r:')).toBe(1);
    expect(await fire.raw.exists(timers.keys.tombstone('r:1'))).toBe(1);
    await waitFor(() => aborted, { timeoutMs: 5_000 }); // deadline
  });
});
