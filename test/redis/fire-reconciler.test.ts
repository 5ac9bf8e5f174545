import type { TimerSpec } from '@sundial/core';
import { waitFor } from '@sundial/testing/harness';
import { claimAndDie, eventually, gate, leaseExpired, matching, recorder, useFirePath } from './fire-fixture';

const fire = useFirePath();

describe('fire path: reconciler', () => {
  it('re-arms an armed timer whose BullMQ job was deleted behind its back', async () => {
    const cluster = await fire.cluster();
    await cluster.dispatcher();
    const timer = await cluster.timers.schedule({ key: 'k', handler: 'h', delay: 0 });
    const armed = cluster.timers.keys.armed(0);
    await waitFor(async () => (await fire.raw.zscore(armed, 'k')) !== null, { what: 'armed' });
    const jobId = await cluster.jobOf('k');
    const queue = cluster.queueOf('k');
    await waitFor(async () => (await queue.getJob(jobId)) !== undefined, { what: 'job' });
    await queue.remove(jobId);
    expect(await cluster.reconciler({ graceMs: 0 }).reconcileOnce()).toEqual({
      rearmed: 1,
      requeued: 0,
      lost: 0,
    });
    // Handed to a new job at once; within the grace the reconciler leaves it to the dispatcher.
    expect(await cluster.reconciler().reconcileOnce()).toEqual({ rearmed: 0, requeued: 0, lost: 0 });
    const handler = recorder();
    await cluster.runner({ h: handler.handler });
    await eventually(cluster.events, { type: 'completed', key: 'k', id: timer.id });
    expect(handler.calls).toHaveLength(1);
  });

  it('leaves an armed timer alone while its job exists', async () => {
    const cluster = await fire.cluster();
    await cluster.dispatcher();
    await cluster.timers.schedule({ key: 'k', handler: 'h', delay: 0 });
    await waitFor(async () => (await fire.raw.zscore(cluster.timers.keys.armed(0), 'k')) !== null, {
      what: 'armed',
    });
    const jobId = await cluster.jobOf('k');
    await waitFor(async () => (await cluster.queueOf('k').getJob(jobId)) !== undefined, { what: 'job' });
    expect(await cluster.reconciler({ graceMs: 0 }).reconcileOnce()).toEqual({
      rearmed: 0,
      requeued: 0,
      lost: 0,
    });
  });

  it("requeues a dead worker's at-least-once run when its job is gone too", async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({ key: 'k', handler: 'h', delay: 0 });
    await claimAndDie(cluster, timer, 50);
    await leaseExpired(cluster, fire.raw, 'k');
    const reconciler = cluster.reconciler();
    expect(await reconciler.reconcileOnce()).toEqual({ rearmed: 0, requeued: 1, lost: 0 });
    expect(await cluster.timers.get('k')).toMatchObject({ status: 'pending', version: 1, runCount: 1 });
    // back to pending: `s` is left out again, as a new row's (docs/design.md "Row values")
    expect(await fire.raw.hmget(cluster.timers.keys.row('k'), 'v', 's', 'k')).toEqual([null, null, null]);
    const handler = recorder();
    await cluster.dispatcher();
    await cluster.runner({ h: handler.handler });
    await eventually(cluster.events, { type: 'completed', key: 'k' });
    expect(handler.calls.map((ctx) => ctx.runCount)).toEqual([2]);
  });

  /** An awaitTask:false interval (every 200 ms) whose first tick, a free run, a worker claims and dies with. */
  async function deadFreeRun(spec: Partial<TimerSpec>) {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({
      key: 'k',
      handler: 'h',
      every: 200,
      awaitTask: false,
      ...spec,
    });
    await waitFor(async () => (await cluster.redisNow()) >= timer.dueAt, { intervalMs: 10, what: 'due' });
    await claimAndDie(cluster, timer, 300);
    return cluster;
  }

  /**
   * The dead worker's free run (v1); the second tick, the final one (maxRuns 2), runs on a live runner
   * and ends the timer before that lease expires. The ended row stays while the dead worker's run is in
   * flight, even with removeOnComplete.
   */
  async function freeRunOfEndedTimer(delivery: 'at-least-once' | 'at-most-once', removeOnComplete: boolean) {
    const cluster = await deadFreeRun({ maxRuns: 2, delivery, removeOnComplete });
    const handler = recorder();
    await cluster.dispatcher();
    await cluster.runner({ h: handler.handler });
    await eventually(cluster.events, { type: 'completed', key: 'k', version: 2 });
    expect(await cluster.timers.get('k')).toMatchObject({ status: 'completed', runCount: 2 });
    await leaseExpired(cluster, fire.raw, 'k|1');
    return { cluster, handler };
  }

  it.each([false, true])(
    "a dead worker's at-least-once awaitTask:false run runs again though its timer ended meanwhile (removeOnComplete %s)",
    async (removeOnComplete) => {
      const { cluster, handler } = await freeRunOfEndedTimer('at-least-once', removeOnComplete);
      expect(await cluster.reconciler().reconcileOnce()).toEqual({ rearmed: 0, requeued: 1, lost: 0 });
      await eventually(cluster.events, { type: 'completed', key: 'k', version: 1 });
      expect(handler.calls.map(({ version, runCount }) => ({ version, runCount }))).toEqual([
        { version: 2, runCount: 2 },
        { version: 1, runCount: 3 },
      ]);
      expect(matching(cluster.events, { type: 'failed', key: 'k' })).toEqual([]);
      expect(await cluster.timers.get('k')).toEqual(
        removeOnComplete
          ? null
          : expect.objectContaining({
              status: 'completed',
              runCount: 3,
              last: expect.objectContaining({ status: 'ok' }),
            }),
      );
      expect((await cluster.timers.list()).items.map((row) => row.key)).toEqual(
        removeOnComplete ? [] : ['k'],
      );
    },
  );

  it("a dead worker's awaitTask:false run running again while the final, held run goes on: both complete once", async () => {
    const cluster = await deadFreeRun({ maxRuns: 3, removeOnComplete: false });
    // v2 runs free; v3, the final run, is held and goes on until the re-run of v1 has been claimed
    const hold = gate();
    const handler = recorder((ctx) => (ctx.version === 3 ? hold.promise : undefined));
    await cluster.dispatcher();
    await cluster.runner({ h: handler.handler });
    await waitFor(() => handler.calls.some((ctx) => ctx.version === 3), { what: 'the final run' });
    await leaseExpired(cluster, fire.raw, 'k|1');
    expect(await cluster.reconciler().reconcileOnce()).toEqual({ rearmed: 0, requeued: 1, lost: 0 });
    await eventually(cluster.events, { type: 'completed', key: 'k', version: 1 });
    hold.open();
    await eventually(cluster.events, { type: 'completed', key: 'k', version: 3 });
    expect(handler.calls.map(({ version, runCount }) => ({ version, runCount }))).toEqual([
      { version: 2, runCount: 2 },
      { version: 3, runCount: 3 },
      { version: 1, runCount: 4 },
    ]);
    expect(matching(cluster.events, { type: 'stale', key: 'k' })).toEqual([]);
    expect(await cluster.timers.get('k')).toMatchObject({ status: 'completed', runCount: 4 });
  });

  it.each([false, true])(
    "a dead worker's at-most-once awaitTask:false run is recorded lost after its timer ended (removeOnComplete %s)",
    async (removeOnComplete) => {
      const { cluster, handler } = await freeRunOfEndedTimer('at-most-once', removeOnComplete);
      expect(await cluster.reconciler().reconcileOnce()).toEqual({ rearmed: 0, requeued: 0, lost: 1 });
      expect(await eventually(cluster.events, { type: 'failed', key: 'k', version: 1 })).toMatchObject({
        error: { reason: 'lost' },
      });
      expect(handler.calls.map((ctx) => ctx.version)).toEqual([2]);
      // its ledger entry says lost: complete.lua settled it as lost (not told by its error's reason)
      expect(await cluster.timers.history('k')).toContainEqual(
        expect.objectContaining({ event: 'lost', version: 1, reason: 'lost' }),
      );
      // The final run's outcome stays the timer's `last`: the lost run began before it.
      expect(await cluster.timers.get('k')).toEqual(
        removeOnComplete
          ? null
          : expect.objectContaining({
              status: 'completed',
              runCount: 2,
              last: expect.objectContaining({ status: 'ok' }),
            }),
      );
    },
  );
});
