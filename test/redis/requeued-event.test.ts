import type { TimerEvent } from '@sundial/core';
import { waitFor } from '@sundial/testing/harness';
import {
  claimAndDie,
  claimedByDeadWorker,
  eventually,
  type FireCluster,
  leaseExpired,
  recorder,
  redeliveredLostRuns,
  useFirePath,
} from './fire-fixture';
import { record } from './store-fixture';

const fire = useFirePath();

/** What a listener of `key` heard, in order: each event's type and version. */
function told(heard: TimerEvent[], key: string): [string, number][] {
  return heard.filter((event) => event.key === key).map(({ type, version }) => [type, version]);
}

/** Every event a listener of RedisTimers.on hears of a run's life, and of its loss. */
function listen(cluster: FireCluster): TimerEvent[] {
  return record(cluster.timers, 'requeued', 'running', 'completed', 'failed');
}

/**
 * A dead worker's at-least-once run put back to run again (the reconciler, or the claim of its redelivered
 * fire job) had a `lost` ledger entry (reason `requeued`) and a metric, but no event: a listener heard
 * only a second `running` of the same version and could not tell why. Each requeue is one `requeued`
 * event now (docs/spec.md §3.6), naming the worker whose lease ran out, before the run again starts.
 */
describe('fire path: a run put back to run again is told (event requeued)', () => {
  it('the reconciler requeues a held run: one requeued event, then the run again', async () => {
    const cluster = await fire.cluster();
    const heard = listen(cluster);
    const timer = await claimedByDeadWorker(cluster, fire.raw, 'again', 'at-least-once');
    expect(await cluster.reconciler().reconcileOnce()).toEqual({ rearmed: 0, requeued: 1, lost: 0 });
    await cluster.dispatcher();
    await cluster.runner({ h: recorder().handler });
    await eventually(cluster.events, { type: 'completed', key: 'again' });
    await waitFor(() => heard.some((event) => event.type === 'completed') || undefined, {
      what: 'the completion heard',
    });
    expect(told(heard, 'again')).toEqual([
      ['running', 1],
      ['requeued', 1],
      ['running', 1],
      ['completed', 1],
    ]);
    const requeued = heard.find((event) => event.type === 'requeued');
    expect(requeued).toEqual({
      type: 'requeued',
      id: timer.id,
      key: 'again',
      version: 1,
      kind: 'once',
      at: expect.any(Number) as number,
      due: timer.dueAt,
      workerId: 'dead-worker',
    });
    expect(requeued!.at).toBeGreaterThan(timer.dueAt);
    // settled once: a pass after it finds nothing, and tells nothing more
    expect(await cluster.reconciler().reconcileOnce()).toEqual({ rearmed: 0, requeued: 0, lost: 0 });
    expect(cluster.events.filter((event) => event.type === 'requeued')).toHaveLength(1);
  });

  it('the claim of a redelivered fire job takes a held run over: one requeued event; at-most-once is failed', async () => {
    const cluster = await fire.cluster();
    const heard = listen(cluster);
    await cluster.runner({ h: recorder().handler });
    const { again } = await redeliveredLostRuns(cluster, fire.raw);
    await eventually(cluster.events, { type: 'failed', key: 'lost:once' });
    await eventually(cluster.events, { type: 'completed', key: 'lost:again' });
    await waitFor(() => heard.filter((event) => event.type !== 'running').length === 3 || undefined, {
      what: 'the outcomes heard',
    });
    expect(told(heard, 'lost:again')).toEqual([
      ['running', 1],
      ['requeued', 1],
      ['running', 1],
      ['completed', 1],
    ]);
    expect(heard.find((event) => event.type === 'requeued')).toMatchObject({
      key: 'lost:again',
      due: again.dueAt,
      workerId: 'dead-worker',
    });
    // a run lost is told as before: failed, reason lost, never requeued
    expect(told(heard, 'lost:once')).toEqual([
      ['running', 1],
      ['failed', 1],
    ]);
    expect(await cluster.reconciler().reconcileOnce()).toEqual({ rearmed: 0, requeued: 0, lost: 0 });
    expect(cluster.events.filter((event) => event.type === 'requeued')).toHaveLength(1);
  });

  it("the reconciler requeues a free run: its event names that run's version and due, not the row's", async () => {
    const cluster = await fire.cluster();
    const heard = listen(cluster);
    const timer = await cluster.timers.schedule({ key: 'k', handler: 'h', every: 200, awaitTask: false });
    await claimAndDie(cluster, timer, 300);
    await leaseExpired(cluster, fire.raw, 'k|1');
    expect(await cluster.reconciler().reconcileOnce()).toEqual({ rearmed: 0, requeued: 1, lost: 0 });
    await waitFor(() => heard.find((event) => event.type === 'requeued'), { what: 'the requeued event' });
    expect(heard.filter((event) => event.type === 'requeued')).toEqual([
      expect.objectContaining({
        key: 'k',
        version: 1,
        kind: 'interval',
        due: timer.dueAt,
        workerId: 'dead-worker',
      }),
    ]);
    // the row went on to its next tick meanwhile
    expect(await cluster.timers.get('k')).toMatchObject({ version: 2 });
  });

  it("a closing worker's hand-back: one requeued event per at-least-once run, naming that worker", async () => {
    const cluster = await fire.cluster();
    const heard = listen(cluster);
    // a handler that ignores its signal: still going when the grace (0) ends
    const stuck = recorder(() => new Promise(() => undefined));
    const runner = await cluster.runner({ stuck: stuck.handler });
    for (const delivery of ['at-least-once', 'at-most-once'] as const)
      await cluster.timers.schedule({ key: delivery, handler: 'stuck', delay: 0, delivery });
    await cluster.dispatcher();
    await waitFor(() => stuck.calls.length === 2 || undefined, { timeoutMs: 10_000, what: 'two runs' }); // deadline

    await runner.close(0);

    await waitFor(() => heard.find((event) => event.type === 'failed'), { what: 'the lost run heard' });
    await waitFor(() => heard.find((event) => event.type === 'requeued'), { what: 'the requeue heard' });
    expect(heard.filter((event) => event.type === 'requeued')).toEqual([
      expect.objectContaining({ key: 'at-least-once', version: 1, workerId: runner.workerId }),
    ]);
    expect(told(heard, 'at-most-once')).toEqual([
      ['running', 1],
      ['failed', 1],
    ]);
  });
});
