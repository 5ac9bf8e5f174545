import { SundialMetrics } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { Registry } from 'prom-client';
import { eventually, recorder, redeliveredLostRuns, story, useFirePath } from './fire-fixture';

const fire = useFirePath();

/** The value of an unlabelled counter on `registry`. */
async function counted(registry: Registry, name: string): Promise<number> {
  const metric = await registry.getSingleMetric(name)?.get();
  return metric?.values[0]?.value ?? 0;
}

/** Each counter of a lost worker's runs (docs/spec.md §6.1) on a registry of its own. */
async function lostCounts(registry: Registry): Promise<{ requeued: number; lost: number }> {
  return {
    requeued: await counted(registry, 'sundial_runs_requeued_total'),
    lost: await counted(registry, 'sundial_runs_lost_total'),
  };
}

/**
 * sundial_runs_lost_total and sundial_runs_requeued_total counted only the reconciler's settlements: a
 * dead worker's run settled by the claim of its redelivered fire job, or a run a closing worker handed back
 * and settled itself, was recorded (ledger, row) and never counted, so SundialRunsLost could miss real
 * losses. Whoever settles a run counts it now, once.
 */
describe('fire path: a worker counts the lost runs it settles', () => {
  it('the claim of a redelivered fire job: an at-most-once run recorded lost, an at-least-once one taken over', async () => {
    const cluster = await fire.cluster();
    const registry = new Registry();
    const handler = recorder();
    await cluster.runner({ h: handler.handler }, { observer: new SundialMetrics(registry) });
    await redeliveredLostRuns(cluster, fire.raw);
    await eventually(cluster.events, { type: 'failed', key: 'lost:once' });
    await eventually(cluster.events, { type: 'completed', key: 'lost:again' });
    await waitFor(async () => (await lostCounts(registry)).lost === 1 || undefined, {
      what: 'the lost count',
    });
    expect(await lostCounts(registry)).toEqual({ requeued: 1, lost: 1 });
    expect(handler.calls.map((ctx) => ctx.key)).toEqual(['lost:again']);
    // the ledger says what the counters say: the dead worker's run ended lost (requeued) before the re-run
    const entries = await cluster.timers.history('lost:again');
    expect(story(entries)).toEqual([
      ['scheduled', 1],
      ['claimed', 1],
      ['lost', 1, 'requeued'],
      ['claimed', 1],
      ['completed', 1],
    ]);
    // counted as the metrics count it: requeued (it ran again), not lost
    expect((await cluster.timers.describe('lost:again')).counters).toMatchObject({
      runs: 2,
      lost: 0,
      requeued: 1,
    });
    expect((await cluster.timers.describe('lost:once')).counters).toMatchObject({ lost: 1, requeued: 0 });
    // nothing left for a reconciler to settle, or to count again
    expect(await cluster.reconciler().reconcileOnce()).toEqual({ rearmed: 0, requeued: 0, lost: 0 });
  });

  it('the hand-back at the end of a shutdown grace, settled by the closing worker', async () => {
    const cluster = await fire.cluster();
    const registry = new Registry();
    // handlers that ignore their signal: still going when the grace (0) ends
    const stuck = recorder(() => new Promise(() => undefined));
    const runner = await cluster.runner({ stuck: stuck.handler }, { observer: new SundialMetrics(registry) });
    for (const delivery of ['at-least-once', 'at-most-once'] as const)
      for (const n of [1, 2])
        await cluster.timers.schedule({
          key: `${delivery}:${n}`,
          handler: 'stuck',
          delay: 0,
          delivery,
          removeOnComplete: false,
        });
    await cluster.dispatcher();
    await waitFor(() => stuck.calls.length === 4 || undefined, { timeoutMs: 10_000, what: 'four runs' });

    await runner.close(0);

    expect(await lostCounts(registry)).toEqual({ requeued: 2, lost: 2 });
    const timers = await Promise.all(
      ['at-least-once:1', 'at-least-once:2', 'at-most-once:1', 'at-most-once:2'].map((key) =>
        cluster.timers.get(key),
      ),
    );
    expect(timers.map((timer) => timer?.status)).toEqual(['pending', 'pending', 'failed', 'failed']);
    expect(await cluster.reconciler().reconcileOnce()).toEqual({ rearmed: 0, requeued: 0, lost: 0 });
  });
});
