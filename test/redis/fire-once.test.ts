import { cronFollowUp } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { eventually, matching, recorder, refOf, useFirePath } from './fire-fixture';

const fire = useFirePath();

type FireCluster = Awaited<ReturnType<typeof fire.cluster>>;

/** Claims `timers` for worker 'w' once the Redis clock has reached all their dues. */
async function claimWhenDue(cluster: FireCluster, timers: Array<Parameters<typeof refOf>[0]>) {
  const due = Math.max(...timers.map((timer) => timer.dueAt));
  await waitFor(async () => (await cluster.redisNow()) >= due, { intervalMs: 5, what: 'due' });
  return cluster.commands.claim(0, 30_000, 'w', timers.map(refOf));
}

describe('fire path: one-shot timers', () => {
  it('fails a timer whose handler is not registered, and keeps running others', async () => {
    const cluster = await fire.cluster();
    const known = recorder();
    await cluster.dispatcher();
    await cluster.runner({ known: known.handler });
    await cluster.timers.schedule({ key: 'a', handler: 'nobody', delay: 0 });
    await cluster.timers.schedule({ key: 'b', handler: 'known', delay: 0 });
    const failed = await eventually(cluster.events, { type: 'failed', key: 'a' });
    expect(failed.error).toMatchObject({ reason: 'unknown-handler' });
    await eventually(cluster.events, { type: 'completed', key: 'b' });
    expect(known.calls).toHaveLength(1);
  });

  it('never runs early: a claim before the due is refused with the time left', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({ key: 'k', handler: 'h', delay: '1h' });
    const [result] = await cluster.commands.claim(0, 30_000, 'w', [refOf(timer)]);
    expect(result.kind).toBe('early');
    expect(result.kind === 'early' && result.waitMs).toBeGreaterThan(3_500_000);
    expect(await cluster.timers.get('k')).toMatchObject({ status: 'pending', runCount: 0, last: null });
  });

  it('a job that arrives early waits for the due instead of running', async () => {
    const cluster = await fire.cluster();
    const handler = recorder();
    await cluster.runner({ h: handler.handler });
    const timer = await cluster.timers.schedule({ key: 'k', handler: 'h', delay: 150 });
    // No dispatcher: the job is added at once, long before the due.
    await cluster.queueOf('k').add('fire', { timers: [refOf(timer)] }, { jobId: 'early-job' });
    await eventually(cluster.events, { type: 'completed', key: 'k' });
    const running = await eventually(cluster.events, { type: 'running', key: 'k' });
    expect(running.at).toBeGreaterThanOrEqual(timer.dueAt);
    expect(handler.calls).toHaveLength(1);
  });

  it('a job far ahead of its due is dropped and the timer stays pending', async () => {
    const cluster = await fire.cluster();
    const handler = recorder();
    await cluster.runner({ h: handler.handler });
    const timer = await cluster.timers.schedule({ key: 'k', handler: 'h', delay: '1h' });
    const queue = cluster.queueOf('k');
    await queue.add('fire', { timers: [refOf(timer)] }, { jobId: 'far' });
    await waitFor(async () => (await queue.getJobState('far')) === 'completed', { what: 'job done' });
    expect(handler.calls).toEqual([]);
    expect(await cluster.timers.get('k')).toMatchObject({ status: 'pending', version: 1, runCount: 0 });
  });

  it('wakes the dispatcher for an earlier due instead of waiting for its poll', async () => {
    const cluster = await fire.cluster();
    await cluster.dispatcher({ pollMs: 60_000 });
    await cluster.runner({ h: () => undefined });
    await cluster.timers.schedule({ key: 'late', handler: 'h', delay: '1h' });
    await cluster.timers.schedule({ key: 'soon', handler: 'h', delay: 100 });
    await eventually(cluster.events, { type: 'completed', key: 'soon' });
    expect(matching(cluster.events, { key: 'late', type: 'running' })).toHaveLength(0);
  });

  it('runs every timer exactly once with two dispatchers and two runners over two partitions', async () => {
    const cluster = await fire.cluster({ partitions: 2 });
    const runs = new Map<string, number>();
    const count = (_payload: unknown, ctx: { key: string }) =>
      void runs.set(ctx.key, (runs.get(ctx.key) ?? 0) + 1);
    await cluster.dispatcher({ batchSize: 7 });
    await cluster.dispatcher({ batchSize: 7 });
    await cluster.runner({ count });
    await cluster.runner({ count });
    const keys = Array.from({ length: 120 }, (_, i) => `many:${i}`);
    await cluster.timers.scheduleMany(
      keys.map((key, i) => ({ key, handler: 'count', delay: (i * 37) % 200 })),
    );
    await waitFor(() => matching(cluster.events, { type: 'completed' }).length === keys.length, {
      what: 'all runs',
    });
    expect(keys.filter((key) => runs.get(key) !== 1)).toEqual([]);
    expect(matching(cluster.events, { type: 'stale' })).toEqual([]);
    expect(await cluster.timers.snapshot()).toEqual([]);
  });
  it('a batch that completes a removed one-shot twice records it once: the second finds it gone', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({ key: 'twice', handler: 'h', delay: 0 });
    const kept = await cluster.timers.schedule({
      key: 'kept',
      handler: 'h',
      delay: 0,
      removeOnComplete: false,
    });
    const claims = await claimWhenDue(cluster, [timer, kept]);
    expect(claims.map((claim) => claim.kind)).toEqual(['claimed', 'claimed']);
    const run = { version: 1, runCount: 1, mode: 'held', outcome: 'ok', missed: 0, overlap: 0 } as const;
    // complete.lua deletes the rows it removes once, at the end of the call: the repeat must not see it.
    const replies = await cluster.commands.complete(0, [
      { ...run, id: timer.id, key: 'twice' },
      { ...run, id: kept.id, key: 'kept' },
      { ...run, id: timer.id, key: 'twice' },
    ]);
    expect(replies).toEqual([
      { kind: 'done', missed: 0, overlap: 0 },
      { kind: 'done', missed: 0, overlap: 0 },
      { kind: 'stale', reason: 'gone' },
    ]);
    expect(await fire.raw.exists(cluster.timers.keys.row('twice'))).toBe(0);
    expect(await cluster.timers.get('twice')).toBeNull();
    expect(await cluster.timers.get('kept')).toMatchObject({ status: 'completed', runCount: 1 });
    const history = await cluster.timers.history('twice');
    expect(history.map((entry) => entry.event)).toEqual(['stale', 'completed', 'claimed', 'scheduled']);
  });

  it('a completion call repeated with its request answers as the first: done, done with skips, stale', async () => {
    const cluster = await fire.cluster();
    const once = await cluster.timers.schedule({ key: 'once', handler: 'h', delay: 0 });
    const cron = await cluster.timers.schedule({ key: 'c', handler: 'h', cron: '* * * * * *', tz: 'UTC' });
    const claims = await claimWhenDue(cluster, [once, cron]);
    expect(claims.map((claim) => claim.kind)).toEqual(['claimed', 'claimed']);
    const run = { version: 1, runCount: 1, mode: 'held', outcome: 'ok', missed: 0, overlap: 0 } as const;
    const followUp = cronFollowUp({ k: 'cron', cr: '* * * * * *', tz: 'UTC' }, cron.dueAt, cron.dueAt + 3500);
    const batch = [
      { ...run, id: once.id, key: 'once' },
      { ...run, id: cron.id, key: 'c', ...followUp, missed: 2 },
      { ...run, id: 'gone', key: 'nothing' },
    ];
    const request = { id: 'repeated-completion', memoryMs: 60_000 };
    const first = await cluster.commands.complete(0, batch, request);
    expect(first).toEqual([
      { kind: 'done', missed: 0, overlap: 0 },
      { kind: 'done', missed: 2, overlap: 3 },
      { kind: 'stale', reason: 'gone' },
    ]);
    // Asked again (a lost reply), it answers the same, not from the state it left (once gone, c at version 2).
    expect(await cluster.commands.complete(0, batch, request)).toEqual(first);
    expect(await cluster.timers.get('c')).toMatchObject({ status: 'pending', version: 2, runCount: 1 });
    const fresh = await cluster.commands.complete(0, batch);
    expect(fresh.map((reply) => reply.kind === 'stale' && reply.reason)).toEqual(['gone', 'version', 'gone']);
  });
});
