import type { TimerSpec } from '@sundial/core';
import { waitFor } from '@sundial/testing/harness';
import { eventually, leaseExpired, recorder, refOf, useFirePath } from './fire-fixture';

const fire = useFirePath();

/**
 * A run put back to run again (docs/spec.md §3.8: the reconciler's requeue of a dead worker's
 * at-least-once run; §4.6: an unstarted hand-back, at-most-once too) is the run claimed before — judged
 * at that claim by its slot policy (§3.3c: "a slot claimed before its successor came runs, however
 * late") — so its claim again never passes it as late: it runs, with its own due, as a claim of its
 * redelivered fire job does. Before, the reconciler's requeue left a plain pending row that the claim sent
 * to the late check: under catchup 'skip' or a catchupWindow a requeue that came after the next slot
 * counted the run `missed` and it never ran again (a run moved by reschedule, `mv`, ran: it is no slot).
 */
describe('fire path: a requeued run is not judged late again', () => {
  const SPECS: Array<[string, Partial<TimerSpec>]> = [
    ["catchup 'skip'", { catchup: 'skip' }],
    ['a catchupWindow', { catchupWindow: 100 }],
  ];

  it.each(SPECS)('%s: the slot runs again, with its due, once its successor came', async (_name, policy) => {
    const cluster = await fire.cluster({ partitions: 1 });
    const every = 200;
    const timer = await cluster.timers.schedule({ key: 'k', handler: 'h', every, ...policy } as TimerSpec);
    // a worker claims it in time (its slot judged not late: the claim again after 'check'), then dies
    await waitFor(async () => (await cluster.redisNow()) >= timer.dueAt, { intervalMs: 5, what: 'due' });
    const [claim] = await cluster.commands.claim(0, 50, 'dead-worker', [refOf(timer)], true);
    expect(claim.kind).toBe('claimed');
    await leaseExpired(cluster, fire.raw, 'k');
    await waitFor(async () => (await cluster.redisNow()) > timer.dueAt + every + 150, {
      intervalMs: 10,
      what: 'the next slot and the window gone by',
    });
    expect(await cluster.reconciler().reconcileOnce()).toEqual({ rearmed: 0, requeued: 1, lost: 0 });
    const handler = recorder();
    await cluster.dispatcher();
    await cluster.runner({ h: handler.handler });
    await eventually(cluster.events, { type: 'completed', key: 'k' });
    expect(handler.calls[0].due).toBe(timer.dueAt);
    expect(handler.calls[0].version).toBe(timer.version);
  });
});
