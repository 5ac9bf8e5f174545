import type { LedgerEntry, TimerSpec } from '@sundial/core';
import type { Completion } from '@sundial/redis';
import { claimAndDie, type FireCluster, leaseExpired, refOf, useFirePath } from './fire-fixture';

const fire = useFirePath();

/** The ledger of `key` oldest first, as `{ event, version, workerId?, reason? }`. */
async function story(cluster: FireCluster, key: string): Promise<Partial<LedgerEntry>[]> {
  return (await cluster.timers.history(key))
    .reverse()
    .map(({ event, version, workerId, reason }) =>
      JSON.parse(JSON.stringify({ event, version, workerId, reason })),
    );
}

/** A completion of `key`'s run (version 1) as a worker sends it; `workerId` undefined: a release before. */
function done(
  timer: { id: string; key: string },
  run: Pick<Completion, 'runCount' | 'mode' | 'outcome' | 'workerId'>,
): Completion {
  return { id: timer.id, key: timer.key, version: 1, missed: 0, overlap: 0, ...run };
}

/**
 * An awaitTask:false interval's first tick (due 200 ms after now) claimed free by `workerId`, with a lease
 * of `leaseMs` it never renews.
 */
async function freeTick(
  cluster: FireCluster,
  key: string,
  workerId: string,
  { leaseMs = 30_000, delivery = 'at-least-once' as TimerSpec['delivery'] } = {},
) {
  const timer = await cluster.timers.schedule({ key, handler: 'h', every: 200, awaitTask: false, delivery });
  await claimAndDie(cluster, timer, leaseMs, workerId);
  return timer;
}

/**
 * docs/spec.md §3.9: every entry that records a run's end or its refusal names the worker that ran it.
 * A late completion's `stale` (its lease ran out and another worker took the run over) and a free run's
 * outcome named no worker, so `history` could not tell whose late completion was refused.
 */
describe('ledger: the worker that ran a run', () => {
  it('a late completion of a run another worker took over is `stale`, naming the late worker', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({
      key: 'k',
      handler: 'h',
      delay: 0,
      removeOnComplete: false,
    });
    await claimAndDie(cluster, timer, 100, 'worker-a');
    await leaseExpired(cluster, fire.raw, 'k');
    const [takeover] = await cluster.commands.claim(0, 30_000, 'worker-b', [refOf(timer)]);
    expect(takeover).toMatchObject({ kind: 'claimed', requeued: true });

    const [late] = await cluster.commands.complete(0, [
      done(timer, { runCount: 1, mode: 'held', outcome: 'ok', workerId: 'worker-a' }),
    ]);
    expect(late).toEqual({ kind: 'stale', reason: 'status' });
    await cluster.commands.complete(0, [
      done(timer, { runCount: 2, mode: 'held', outcome: 'ok', workerId: 'worker-b' }),
    ]);
    expect(await story(cluster, 'k')).toEqual([
      { event: 'scheduled', version: 1 },
      { event: 'claimed', version: 1, workerId: 'worker-a' },
      { event: 'lost', version: 1, workerId: 'worker-a', reason: 'requeued' },
      { event: 'claimed', version: 1, workerId: 'worker-b' },
      { event: 'stale', version: 1, workerId: 'worker-a', reason: 'status' },
      { event: 'completed', version: 1, workerId: 'worker-b' },
    ]);
  });

  it('a late completion of a cancelled timer is `stale` gone, naming its worker', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({ key: 'k', handler: 'h', delay: 0 });
    await claimAndDie(cluster, timer, 30_000, 'worker-a');
    await cluster.timers.cancel('k');
    await cluster.commands.complete(0, [
      done(timer, { runCount: 1, mode: 'held', outcome: 'failed', workerId: 'worker-a' }),
    ]);
    expect((await story(cluster, 'k')).at(-1)).toEqual({
      event: 'stale',
      version: 1,
      workerId: 'worker-a',
      reason: 'gone',
    });
  });

  it("a free run's outcome names its worker, also in a batch of several workers' runs", async () => {
    const cluster = await fire.cluster();
    const [a, b] = [await freeTick(cluster, 'a', 'worker-a'), await freeTick(cluster, 'b', 'worker-b')];
    await cluster.commands.complete(0, [
      done(a, { runCount: 1, mode: 'free', outcome: 'ok', workerId: 'worker-a' }),
      done(b, { runCount: 1, mode: 'free', outcome: 'failed', workerId: 'worker-b' }),
    ]);
    const outcome = async (key: string) =>
      (await story(cluster, key)).find((entry) => entry.event === 'completed' || entry.event === 'failed');
    expect(await outcome('a')).toEqual({ event: 'completed', version: 1, workerId: 'worker-a' });
    expect(await outcome('b')).toEqual({ event: 'failed', version: 1, workerId: 'worker-b' });
  });

  it("rolling upgrade: a completion naming no worker (the release before's) settles; a free run's entry names its record's", async () => {
    const cluster = await fire.cluster();
    const tick = await freeTick(cluster, 'free', 'worker-a');
    const once = await cluster.timers.schedule({ key: 'once', handler: 'h', delay: 0 });
    await claimAndDie(cluster, once, 30_000, 'worker-a');
    await cluster.timers.cancel('once');
    const replies = await cluster.commands.complete(0, [
      done(tick, { runCount: 1, mode: 'free', outcome: 'ok' }),
      done(once, { runCount: 1, mode: 'held', outcome: 'ok' }),
    ]);
    expect(replies.map((reply) => reply.kind)).toEqual(['done', 'stale']);
    expect((await story(cluster, 'free')).find((entry) => entry.event === 'completed')).toEqual({
      event: 'completed',
      version: 1,
      workerId: 'worker-a',
    });
    // a late completion that names no worker: nobody to name
    expect((await story(cluster, 'once')).at(-1)).toEqual({ event: 'stale', version: 1, reason: 'gone' });
  });

  it('an at-most-once free run whose worker died is `lost`, naming that worker', async () => {
    const cluster = await fire.cluster();
    await freeTick(cluster, 'k', 'worker-a', { leaseMs: 100, delivery: 'at-most-once' });
    await leaseExpired(cluster, fire.raw, 'k|1');
    expect(await cluster.reconciler().reconcileOnce()).toMatchObject({ lost: 1 });
    expect((await story(cluster, 'k')).find((entry) => entry.event === 'lost')).toEqual({
      event: 'lost',
      version: 1,
      workerId: 'worker-a',
      reason: 'lost',
    });
  });
});
