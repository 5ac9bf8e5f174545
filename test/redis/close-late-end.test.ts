import type { SundialLogger } from '@sundial/core';
import type { SundialObserver } from '@sundial/redis';
import { eventually, gate, matching, recorder, useFirePath } from './fire-fixture';

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
      const running = gate();
      // ignores the abort; ends on the next turn of the event loop after it (µs after the grace)
      const late = recorder(
        (ctx) =>
          new Promise<void>((resolve) => {
            ctx.signal.addEventListener('abort', () => setImmediate(resolve));
            running.open();
          }),
      );
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
});
