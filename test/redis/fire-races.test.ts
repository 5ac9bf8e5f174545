import type { TimerEvent } from '@sundial/core';
import { waitFor } from '@sundial/testing/harness';
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
