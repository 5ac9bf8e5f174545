import type { SundialLogger } from '@sundial/core';
import type { SundialObserver } from '@sundial/redis';
import { eventually, gate, matching, recorder, refOf, useFirePath } from './fire-fixture';

const fire = useFirePath();

/** What the runner's observer was told, as the metrics count it (SundialMetrics). */
function counting() {
  const counts: Record<string, number> = {};
  const add = (name: string, n = 1) => n > 0 && (counts[name] = (counts[name] ?? 0) + n);
  const observer: SundialObserver = {
    runFinished: (run) => add(`runs:${run.status}`),
    stale: (stale) => add(`stale:${stale.phase}:${stale.reason}`),
    workerLost: (lost) => add(lost.outcome),
    reconciled: (counts) => {
      add('requeued', counts.requeued);
      add('lost', counts.lost);
    },
  };
  return { counts, observer };
}

function errors(): SundialLogger & { errors: string[] } {
  const logged: string[] = [];
  const none = () => undefined;
  return {
    errors: logged,
    debug: none,
    info: none,
    warn: none,
    error: (message) => void logged.push(message),
  };
}

/**
 * A handler that ignores the abort and ends on the next turn of the event loop after it (µs after the
 * grace); `running` opens once it was called.
 */
function endingJustAfterAbort() {
  const running = gate();
  const late = recorder(
    (ctx) =>
      new Promise<void>((resolve) => {
        ctx.signal.addEventListener('abort', () => setImmediate(resolve));
        running.open();
      }),
  );
  return { running, late };
}

/**
 * A handler that ignores its aborted signal and ends just after the shutdown grace (here: the moment after
 * its run was handed back, while the hand-back's release is on its way). The hand-back's record is what
 * the worker did at the grace's end — at-least-once put back to run again, at-most-once recorded lost
 * (docs/spec.md §4.6) — and the handler's end, which came after, is a late completion: stale, its ledger
 * entry naming the worker, counted, as a run's whose lease ran out (§3.8). Before, that end was dropped
 * without a word: the ledger and the metrics never told that the handler ran to its end.
 */
describe('fire path: a handler that ends just after its run was handed back at shutdown', () => {
  for (const delivery of ['at-least-once', 'at-most-once'] as const) {
    it(`${delivery}: the hand-back's record stands, and the handler's late end is recorded stale`, async () => {
      const cluster = await fire.cluster();
      const { counts, observer } = counting();
      const logger = errors();
      const { running, late } = endingJustAfterAbort();
      await cluster.dispatcher();
      const runner = await cluster.runner({ late: late.handler }, { observer, logger });
      await cluster.timers.schedule({
        key: 'k',
        handler: 'late',
        delay: 0,
        delivery,
        removeOnComplete: false,
      });
      await running.promise;

      await runner.close(0);

      const story = (await cluster.timers.history('k')).map((entry) => ({
        event: entry.event,
        workerId: entry.workerId,
      }));
      // newest first: the late end, after the hand-back's settlement (at-least-once: re-armed in between)
      const ours = story.filter((entry) => entry.workerId === runner.workerId).map((entry) => entry.event);
      expect(ours.slice(0, 2)).toEqual(['stale', 'lost']);
      expect(story[0].event).toBe('stale');
      await eventually(cluster.events, { type: 'stale', key: 'k', reason: 'status' });
      const row = await cluster.timers.get('k');
      expect(row?.status).toBe(delivery === 'at-most-once' ? 'failed' : 'pending');
      // every metric agrees with the ledger: the hand-back's settlement, then the late end as stale
      expect(counts).toEqual({
        [delivery === 'at-most-once' ? 'lost' : 'requeued']: 1,
        'runs:stale': 1,
        'stale:complete:status': 1,
      });
      expect(logger.errors).toEqual([]);
      expect(matching(cluster.events, { type: 'completed', key: 'k' })).toEqual([]);
    });
  }

  it('a handler ending once the worker closed is not recorded, and nothing fails for it', async () => {
    const cluster = await fire.cluster();
    const { counts, observer } = counting();
    const logger = errors();
    const running = gate();
    const mayEnd = gate();
    const stubborn = recorder(() => {
      running.open();
      return mayEnd.promise;
    });
    await cluster.dispatcher();
    const runner = await cluster.runner({ stubborn: stubborn.handler }, { observer, logger });
    await cluster.timers.schedule({ key: 'k', handler: 'stubborn', delay: 0, removeOnComplete: false });
    await running.promise;
    await runner.close(0);
    mayEnd.open();
    await new Promise((resolve) => setTimeout(resolve, 50)); // what a late send would take (its linger: 5–10 ms)

    expect((await cluster.timers.history('k')).map((entry) => entry.event)).not.toContain('stale');
    expect(counts).toEqual({ requeued: 1 });
    expect(logger.errors).toEqual([]);
  });

  /**
   * The closing worker's reconcile settles at most 1,000 expired leases a partition (oldest first): with
   * more expired than that — here 1,000 of a dead worker's, older than the hand-back's — the run handed
   * back keeps its expired lease, still `running` under this worker, until a reconciler's next pass. Its
   * handler's late end came in between and complete.lua, which checked the lease's expiry only for a
   * `lost` settlement, recorded it as the run's outcome (`completed`), against what the hand-back said.
   * A late end is now stale whatever the row; the reconciler then settles the run as the hand-back said.
   */
  it('a late end while the hand-back reconcile has not reached the run (more than 1,000 leases expired) is stale too', async () => {
    const cluster = await fire.cluster();
    const { counts, observer } = counting();
    const logger = errors();
    // 1,000 runs of a worker that died, their leases expired before the close (no dispatcher yet)
    const dead = await cluster.timers.scheduleMany(
      Array.from({ length: 1_000 }, (_, i) => ({ key: `dead:${i}`, handler: 'gone', delay: 0 })),
    );
    for (let i = 0; i < dead.length; i += 100) {
      const claims = await cluster.commands.claim(0, 1, 'dead-worker', dead.slice(i, i + 100).map(refOf));
      expect(claims.every((claim) => claim.kind === 'claimed')).toBe(true);
    }
    const { running, late } = endingJustAfterAbort();
    await cluster.dispatcher();
    const runner = await cluster.runner({ late: late.handler }, { observer, logger });
    await cluster.timers.schedule({ key: 'k', handler: 'late', delay: 0, removeOnComplete: false });
    await running.promise;

    await runner.close(0);

    // the hand-back's reconcile settled the dead worker's 1,000, not this run; its late end is stale
    expect(counts).toEqual({ requeued: 1_000, 'runs:stale': 1, 'stale:complete:status': 1 });
    expect(logger.errors).toEqual([]);
    expect(await cluster.timers.get('k')).toMatchObject({ status: 'running', runCount: 1 });
    // the next reconciler pass puts it back to run again, as the hand-back's line said
    const reconciler = cluster.reconciler();
    await reconciler.reconcileOnce();
    expect(await cluster.timers.get('k')).toMatchObject({ status: 'pending', runCount: 1 });
    // newest first: the reconciler's settlement after the late end (a hand-off of the run put back aside)
    const story = (await cluster.timers.history('k'))
      .filter((entry) => entry.event !== 'armed')
      .map((entry) => [entry.event, entry.reason]);
    expect(story.slice(0, 3)).toEqual([
      ['lost', 'requeued'],
      ['stale', 'status'],
      ['claimed', undefined],
    ]);
    expect(matching(cluster.events, { type: 'completed', key: 'k' })).toEqual([]);
  });
});
