/**
 * The note of a partition's kept finished rows (`P:{pN}:kr`, includes/indexes.lua note_kept): while it
 * exists a cancelAll's mark reads each row's status for its count; it goes with the last such row, so a
 * partition that once kept one counts without those reads again.
 */
import { repartition, SundialKeys } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { commandCalls, gate, useFirePath } from './fire-fixture';
import { scopeRecordCalls } from './scope-record-calls';

const fire = useFirePath();
const { cancelAllCall, recordsLeft } = scopeRecordCalls(fire);

describe('cancelAll scope records: the kept finished rows note', () => {
  it('goes with the last kept finished row, whichever write takes it away; the count stays exact', async () => {
    const cluster = await fire.cluster({ cancelAllRecords: true });
    const { timers } = cluster;
    const kr = `${timers.keys.base(0)}kr`;
    await cluster.runner({ h: () => undefined });
    await cluster.dispatcher();
    const done = ['k:cancel', 'k:again', 'k:swept'];
    for (const key of done) await timers.schedule({ key, handler: 'h', delay: 10, removeOnComplete: false });
    await waitFor(async () => (await fire.raw.scard(kr)) === 3, { timeoutMs: 5_000 }); // deadline: they ran
    expect((await fire.raw.smembers(kr)).sort()).toEqual([...done].sort());

    // cancel drops one, a schedule over one makes it live again, a cancelAll's sweep drops the last
    expect(await timers.cancelOutcome('k:cancel')).toBe('completed');
    await timers.schedule({ key: 'k:again', handler: 'h', delay: '1h' });
    expect(await fire.raw.smembers(kr)).toEqual(['k:swept']);
    for (const key of ['l:1', 'l:2']) await timers.schedule({ key, handler: 'h', delay: '1h' });
    expect(await timers.cancelAll('k:')).toBe(1); // k:again live, k:swept kept: not counted
    await waitFor(async () => (await recordsLeft(cluster.prefix)) === 0, { timeoutMs: 5_000 }); // deadline
    expect(await fire.raw.exists(kr)).toBe(0);

    // Gone, the mark counts the batch without reading a status (each an HGET of `s`).
    await fire.raw.config('RESETSTAT');
    expect((await cancelAllCall(cluster, 'mark', 'l:'))[0]).toBe('2');
    expect(await commandCalls(fire.raw, 'hget')).toBe(0);
  });

  it('a row kept for its free runs in flight is noted, and leaves the note with the last of them', async () => {
    const cluster = await fire.cluster();
    const { timers } = cluster;
    const kr = `${timers.keys.base(0)}kr`;
    const first = gate();
    let runs = 0;
    await cluster.runner({ h: () => (++runs === 1 ? first.promise : undefined) });
    await cluster.dispatcher();
    // Two ticks: the first free (its next slot is before endAt), the second held and the last: it ends
    // the timer while the first still runs, so the finished row stays for it (`rp`, complete.lua).
    const endAt = (await cluster.redisNow()) + 500;
    await timers.schedule({ key: 'fr', handler: 'h', every: 200, awaitTask: false, endAt });
    await waitFor(async () => (await fire.raw.hget(timers.keys.row('fr'), 'rp')) === '1', {
      timeoutMs: 5_000, // deadline: both ticks claimed
    });
    expect(await fire.raw.smembers(kr)).toEqual(['fr']);
    first.open();
    await waitFor(async () => (await fire.raw.exists(timers.keys.row('fr'))) === 0, {
      timeoutMs: 5_000, // deadline: the free run's completion
    });
    expect(await fire.raw.exists(kr)).toBe(0);
  });

  it('a timer a passed late slot ends (pass-late.lua) is noted when kept, and counted out by a cancelAll', async () => {
    const cluster = await fire.cluster({ cancelAllRecords: true });
    const { timers } = cluster;
    const kr = `${timers.keys.base(0)}kr`;
    const timer = await timers.schedule({
      key: 'late:kept',
      handler: 'h',
      every: '200ms',
      catchup: 'skip',
      removeOnComplete: false,
    });
    await waitFor(async () => (await cluster.redisNow()) >= timer.dueAt, { intervalMs: 5, what: 'due' });
    const taken = await cluster.commands.takeDue(0, 100, 1_000);
    const [reply] = await cluster.commands.claim(0, 30_000, 'w', taken.job!.timers);
    expect(reply.kind).toBe('check');
    // its last slot passed: no next one (past its endAt, TimerEnd 'ended'), so the timer ends here, kept
    const ended = { next: null, ended: 'ended', missed: 0 };
    expect(await cluster.commands.passLate(0, taken.job!.timers[0], ended)).toBe(true);
    expect(await timers.get('late:kept')).toMatchObject({ status: 'completed' });
    expect(await fire.raw.smembers(kr)).toEqual(['late:kept']);
    // so the mark reads each status: the kept row is not counted as cancelled
    await timers.schedule({ key: 'late:live', handler: 'h', delay: '1h' });
    expect(await timers.cancelAll('late:')).toBe(1);
  });

  it('a repartition moves the note with the row: gone from the partition it leaves', async () => {
    const cluster = await fire.cluster({ partitions: 2 });
    const { timers } = cluster;
    await cluster.runner({ h: () => undefined });
    await cluster.dispatcher();
    const into = new SundialKeys(cluster.prefix, 3);
    const names = Array.from({ length: 20 }, (_, i) => `f:${i}`);
    // a key that leaves partition 1 for another
    const key = names.find((name) => timers.keys.partitionOf(name) === 1 && into.partitionOf(name) !== 1)!;
    await timers.schedule({ key, handler: 'h', delay: 10, removeOnComplete: false });
    await waitFor(async () => (await timers.get(key))?.status === 'completed', { timeoutMs: 5_000 }); // deadline
    expect(await fire.raw.smembers(`${timers.keys.base(1)}kr`)).toEqual([key]);
    await repartition({ connection: fire.url(), prefix: cluster.prefix, to: 3 });
    for (const n of [0, 1, 2])
      expect(await fire.raw.smembers(`${into.base(n)}kr`)).toEqual(n === into.partitionOf(key) ? [key] : []);
  });
});
