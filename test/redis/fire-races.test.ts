import type { TimerEvent, TimerSpec } from '@sundial/core';
import { waitFor } from '@sundial/testing';
import {
  delay,
  eventually,
  gate,
  matching,
  recorder,
  refOf,
  seeded,
  useFirePath,
  work,
} from './fire-fixture';

const fire = useFirePath();

/** The run outcomes recorded for one entry (by id): a cancelled entry must have none. */
function outcomesOf(events: TimerEvent[], id: string): TimerEvent[] {
  return events.filter((event) => event.id === id && (event.type === 'completed' || event.type === 'failed'));
}

describe('fire path: stale jobs', () => {
  it('two deliveries of the same job run it once', async () => {
    const cluster = await fire.cluster();
    const hold = gate();
    const handler = recorder(() => hold.promise);
    await cluster.runner({ h: handler.handler });
    await cluster.runner({ h: handler.handler });
    const timer = await cluster.timers.schedule({ key: 'k', handler: 'h', delay: 0 });
    const queue = cluster.queueOf('k');
    await queue.add('fire', { timers: [refOf(timer)] }, { jobId: 'first' });
    await queue.add('fire', { timers: [refOf(timer)] }, { jobId: 'second' });
    expect(await eventually(cluster.events, { type: 'stale', key: 'k' })).toMatchObject({
      reason: 'status',
      version: 1,
    });
    hold.open();
    await eventually(cluster.events, { type: 'completed', key: 'k' });
    expect(handler.calls).toHaveLength(1);
  });

  it.each([
    ['cancel', 'gone'],
    ['replace', 'gone'],
    ['reschedule', 'version'],
  ])('a job in flight after %s is a no-op', async (operation, reason) => {
    const cluster = await fire.cluster();
    const handler = recorder();
    await cluster.runner({ h: handler.handler });
    const timer = await cluster.timers.schedule({ key: 'k', handler: 'h', delay: 0 });
    if (operation === 'cancel') await cluster.timers.cancel('k');
    if (operation === 'replace')
      await cluster.timers.schedule({ key: 'k', handler: 'h', delay: '1h', ifExists: 'replace' });
    if (operation === 'reschedule') await cluster.timers.reschedule('k', { delay: '1h' });
    await cluster.queueOf('k').add('fire', { timers: [refOf(timer)] }, { jobId: 'old' });
    expect(await eventually(cluster.events, { type: 'stale', key: 'k' })).toMatchObject({
      id: timer.id,
      version: 1,
      reason,
    });
    expect(handler.calls).toEqual([]);
    if (operation !== 'cancel')
      expect(await cluster.timers.get('k')).toMatchObject({ status: 'pending', runCount: 0 });
  });

  it('cancel while running aborts ctx.signal within a second and the completion changes nothing', async () => {
    const cluster = await fire.cluster();
    let abortedAt = 0;
    const handler = recorder(async (ctx) => {
      await work(ctx.signal, 10_000).catch((error: Error) => {
        abortedAt = Date.now();
        throw error;
      });
    });
    await cluster.dispatcher();
    await cluster.runner({ h: handler.handler });
    const timer = await cluster.timers.schedule({
      key: 'k',
      handler: 'h',
      delay: 0,
      removeOnComplete: false,
    });
    await eventually(cluster.events, { type: 'running', key: 'k' });
    const cancelledAt = Date.now();
    expect(await cluster.timers.cancel('k')).toBe(true);
    await waitFor(() => abortedAt > 0, { timeoutMs: 1000, intervalMs: 5, what: 'abort within 1 s' });
    expect(abortedAt - cancelledAt).toBeLessThan(1000);
    expect(await eventually(cluster.events, { type: 'stale', key: 'k' })).toMatchObject({
      id: timer.id,
      reason: 'gone',
    });
    expect(outcomesOf(cluster.events, timer.id)).toEqual([]);
    expect(await cluster.timers.get('k')).toBeNull();
  });

  it('replace while running aborts the old run; the new entry is untouched by its completion', async () => {
    const cluster = await fire.cluster();
    const handler = recorder((ctx) => work(ctx.signal, 10_000));
    await cluster.dispatcher();
    await cluster.runner({ h: handler.handler });
    const old = await cluster.timers.schedule({ key: 'k', handler: 'h', delay: 0 });
    await eventually(cluster.events, { type: 'running', key: 'k' });
    const fresh = await cluster.timers.schedule({ key: 'k', handler: 'h', delay: '1h', ifExists: 'replace' });
    await eventually(cluster.events, { type: 'stale', id: old.id });
    expect(handler.calls[0].signal.aborted).toBe(true);
    expect(await cluster.timers.get('k')).toMatchObject({
      id: fresh.id,
      status: 'pending',
      version: 1,
      runCount: 0,
      last: null,
    });
  });
});

describe('fire path: leases and redelivery', () => {
  /** A worker that claimed the timer and then died: its lease is never renewed. */
  async function claimAndDie(
    cluster: Awaited<ReturnType<typeof fire.cluster>>,
    timer: Parameters<typeof refOf>[0],
    leaseMs: number,
  ) {
    await waitFor(async () => (await cluster.redisNow()) >= timer.dueAt, { intervalMs: 5, what: 'due' });
    const [claim] = await cluster.commands.claim(0, leaseMs, 'dead-worker', [refOf(timer)]);
    expect(claim.kind).toBe('claimed');
  }

  async function leaseExpired(cluster: Awaited<ReturnType<typeof fire.cluster>>, key: string): Promise<void> {
    const leases = cluster.timers.keys.leases(cluster.partitionOf(key));
    await waitFor(async () => Number(await fire.raw.zscore(leases, key)) < (await cluster.redisNow()), {
      intervalMs: 10,
      what: 'lease expiry',
    });
  }

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
    const timer = await cluster.timers.schedule({
      key: 'k',
      handler: 'h',
      delay: 0,
      removeOnComplete: false,
    });
    await claimAndDie(cluster, timer, 100);
    await leaseExpired(cluster, 'k');
    await cluster.queueOf('k').add('fire', { timers: [refOf(timer)] }, { jobId: 'redelivered' });
    await eventually(cluster.events, { type: 'completed', key: 'k' });
    expect(handler.calls.map((ctx) => ctx.runCount)).toEqual([2]);
    expect(await cluster.timers.get('k')).toMatchObject({ status: 'completed', runCount: 2 });
  });

  it('at-most-once: a job redelivered after the lease expired is recorded lost, never re-run', async () => {
    const cluster = await fire.cluster();
    const handler = recorder();
    await cluster.runner({ h: handler.handler });
    const timer = await cluster.timers.schedule({
      key: 'k',
      handler: 'h',
      delay: 0,
      delivery: 'at-most-once',
      removeOnComplete: false,
    });
    await claimAndDie(cluster, timer, 100);
    await leaseExpired(cluster, 'k');
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
    await leaseExpired(cluster, 'k');
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
    await leaseExpired(cluster, 'k');
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
    await leaseExpired(cluster, 'k|1');
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
    await leaseExpired(cluster, 'k|1');
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

  async function claimAndDie(
    cluster: Awaited<ReturnType<typeof fire.cluster>>,
    timer: Parameters<typeof refOf>[0],
    leaseMs: number,
  ) {
    const [claim] = await cluster.commands.claim(0, leaseMs, 'dead-worker', [refOf(timer)]);
    expect(claim.kind).toBe('claimed');
  }

  async function leaseExpired(cluster: Awaited<ReturnType<typeof fire.cluster>>, key: string): Promise<void> {
    const leases = cluster.timers.keys.leases(0);
    await waitFor(async () => Number(await fire.raw.zscore(leases, key)) < (await cluster.redisNow()), {
      intervalMs: 10,
    });
  }
});

describe('fire path: graceful close', () => {
  it('finishes what ends within the grace, aborts and hands back the rest', async () => {
    const cluster = await fire.cluster();
    const quick = recorder(() => delay(50));
    const stubborn = recorder(() => new Promise(() => undefined));
    await cluster.dispatcher();
    const runner = await cluster.runner({ quick: quick.handler, stubborn: stubborn.handler });
    await cluster.timers.schedule({ key: 'quick', handler: 'quick', delay: 0 });
    await cluster.timers.schedule({ key: 'again', handler: 'stubborn', delay: 0 });
    await cluster.timers.schedule({ key: 'once', handler: 'stubborn', delay: 0, delivery: 'at-most-once' });
    await waitFor(() => quick.calls.length === 1 && stubborn.calls.length === 2, { what: 'three runs' });
    await runner.close(200);
    await eventually(cluster.events, { type: 'completed', key: 'quick' });
    expect(stubborn.calls.every((ctx) => ctx.signal.aborted)).toBe(true);
    expect(await eventually(cluster.events, { type: 'failed', key: 'once' })).toMatchObject({
      error: { reason: 'lost' },
    });
    // at-least-once: handed back, it runs again on the next worker.
    const next = recorder();
    await cluster.runner({ stubborn: next.handler });
    await eventually(cluster.events, { type: 'completed', key: 'again' });
    expect(next.calls.map((ctx) => ctx.runCount)).toEqual([2]);
    expect(matching(cluster.events, { type: 'failed', key: 'again' })).toEqual([]);
  });
});

describe('fire path: races with randomized timing', () => {
  const ITERATIONS = 6;

  it('duplicate deliveries with random timing run each version once', async () => {
    const random = seeded(42);
    const cluster = await fire.cluster();
    const runs = new Map<string, number>();
    const handler = recorder(async (ctx) => {
      runs.set(ctx.key, (runs.get(ctx.key) ?? 0) + 1);
      await delay(random() * 50);
    });
    await cluster.runner({ h: handler.handler });
    await cluster.runner({ h: handler.handler });
    const queue = cluster.queueOf('x');
    for (let i = 0; i < ITERATIONS * 3; i++) {
      const timer = await cluster.timers.schedule({
        key: `dup:${i}`,
        handler: 'h',
        delay: Math.floor(random() * 30),
      });
      for (let copy = 0; copy < 3; copy++) {
        setTimeout(
          () => void queue.add('fire', { timers: [refOf(timer)] }, { jobId: `dup-${i}-${copy}` }),
          random() * 60,
        );
      }
    }
    await waitFor(() => matching(cluster.events, { type: 'completed' }).length === ITERATIONS * 3, {
      what: 'runs',
    });
    expect([...runs.values()].every((count) => count === 1)).toBe(true);
    expect(runs.size).toBe(ITERATIONS * 3);
  });

  it('reschedule during complete: the completion never overwrites a newer schedule', async () => {
    const random = seeded(7);
    for (let i = 0; i < ITERATIONS; i++) {
      const cluster = await fire.cluster();
      await cluster.dispatcher();
      await cluster.runner({ h: () => delay(random() * 30) });
      const key = `beat:${i}`;
      await cluster.timers.schedule({ key, handler: 'h', every: 100 });
      let moved: number | undefined;
      while (moved === undefined) {
        await delay(random() * 60);
        moved = await cluster.timers.reschedule(key, { delay: '1h' }).then(
          (timer) => timer.dueAt,
          () => undefined,
        );
      }
      // The run (if any) that was completing around the reschedule cannot re-arm it on the grid.
      await delay(150);
      expect([i, await cluster.timers.get(key)]).toEqual([
        i,
        expect.objectContaining({ status: 'pending', dueAt: moved }),
      ]);
    }
  });
});
