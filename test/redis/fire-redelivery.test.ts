import {
  claimAndDie,
  claimedByDeadWorker,
  delay,
  eventually,
  gate,
  leaseExpired,
  recorder,
  refOf,
  useFirePath,
} from './fire-fixture';

const fire = useFirePath();

describe('fire path: leases and redelivery', () => {
  it('a redelivered job while the first run still holds its lease is stale', async () => {
    const cluster = await fire.cluster();
    const hold = gate();
    const handler = recorder(() => hold.promise);
    await cluster.runner({ h: handler.handler }, { leaseMs: 150 });
    const timer = await cluster.timers.schedule({ key: 'k', handler: 'h', delay: 0 });
    await cluster.queueOf('k').add('fire', { timers: [refOf(timer)] }, { jobId: 'first' });
    await eventually(cluster.events, { type: 'running', key: 'k' });
    // Longer than the lease: renewals keep it alive.
    await delay(200);
    await cluster.queueOf('k').add('fire', { timers: [refOf(timer)] }, { jobId: 'redelivered' });
    expect(await eventually(cluster.events, { type: 'stale', key: 'k' })).toMatchObject({ reason: 'status' });
    hold.open();
    await eventually(cluster.events, { type: 'completed', key: 'k' });
    expect(handler.calls).toHaveLength(1);
  });

  it('at-least-once: a job redelivered after the lease expired runs again', async () => {
    const cluster = await fire.cluster();
    const handler = recorder();
    await cluster.runner({ h: handler.handler });
    const timer = await claimedByDeadWorker(cluster, fire.raw, 'k', 'at-least-once');
    await cluster.queueOf('k').add('fire', { timers: [refOf(timer)] }, { jobId: 'redelivered' });
    await eventually(cluster.events, { type: 'completed', key: 'k' });
    expect(handler.calls.map((ctx) => ctx.runCount)).toEqual([2]);
    expect(await cluster.timers.get('k')).toMatchObject({ status: 'completed', runCount: 2 });
  });

  it('at-most-once: a job redelivered after the lease expired is recorded lost, never re-run', async () => {
    const cluster = await fire.cluster();
    const handler = recorder();
    await cluster.runner({ h: handler.handler });
    const timer = await claimedByDeadWorker(cluster, fire.raw, 'k', 'at-most-once');
    await cluster.queueOf('k').add('fire', { timers: [refOf(timer)] }, { jobId: 'redelivered' });
    const failed = await eventually(cluster.events, { type: 'failed', key: 'k' });
    expect(failed.error).toMatchObject({ reason: 'lost' });
    expect(handler.calls).toEqual([]);
    expect(await cluster.timers.get('k')).toMatchObject({
      status: 'failed',
      runCount: 1,
      last: { status: 'failed' },
    });
  });

  it('at-most-once interval: a lost run arms the next slot', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({
      key: 'k',
      handler: 'h',
      every: 100,
      delivery: 'at-most-once',
    });
    await claimAndDie(cluster, timer, 50);
    await leaseExpired(cluster, fire.raw, 'k');
    expect(await cluster.reconciler().reconcileOnce()).toEqual({ rearmed: 0, requeued: 0, lost: 1 });
    expect(await eventually(cluster.events, { type: 'failed', key: 'k' })).toMatchObject({
      error: { reason: 'lost' },
    });
    const row = await cluster.timers.get('k');
    expect(row).toMatchObject({ status: 'pending', version: 2, runCount: 1 });
    expect((row!.dueAt - timer.scheduledAt) % 100).toBe(0);
    expect(row!.dueAt).toBeGreaterThan(timer.dueAt);
  });

  it("BullMQ's stalled check redelivers a dead worker's job and the timer runs again", async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({ key: 'k', handler: 'h', delay: 0 });
    // The "dead" worker: claims the job, never renews anything, never finishes.
    const { Worker } = await import('bullmq');
    const claimed = gate();
    const zombie = new Worker(
      cluster.timers.keys.queueName(0),
      async (job) => {
        await cluster.commands.claim(0, 200, 'zombie', job.data.timers);
        claimed.open();
        await new Promise(() => undefined);
      },
      {
        connection: { host: '127.0.0.1', port: Number(new URL(fire.url()).port) },
        prefix: cluster.timers.keys.bullPrefix,
        lockDuration: 400,
        skipLockRenewal: true,
        skipStalledCheck: true,
      },
    );
    await cluster.queueOf('k').add('fire', { timers: [refOf(timer)] }, { jobId: 'job' });
    await claimed.promise;
    await zombie.close(true);
    const handler = recorder();
    await cluster.runner({ h: handler.handler }, { leaseMs: 200 });
    await eventually(cluster.events, { type: 'completed', key: 'k' });
    expect(handler.calls.map((ctx) => ctx.runCount)).toEqual([2]);
  });
});
