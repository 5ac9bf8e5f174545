import type { JsonValue, LedgerEntry, TimerContext, TimerSpec } from '@sundial/core';
import { FireCommands, type SundialObserverEvents, type TimerRunner } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import {
  eventually,
  type FireCluster,
  gate,
  leaseExpired,
  matching,
  recorder,
  refOf,
  useFirePath,
} from './fire-fixture';

const fire = useFirePath();

/** The ledger of v1 run by A, put back, run again by B, and A's late completion (before B's outcome). */
const RUN_AGAIN = [
  { event: 'scheduled', version: 1 },
  { event: 'claimed', version: 1, workerId: 'worker-a' },
  { event: 'lost', version: 1, workerId: 'worker-a', reason: 'requeued' },
  { event: 'armed', version: 1 },
  { event: 'claimed', version: 1, workerId: 'worker-b' },
  // (A's late completion names A: whose completion was refused)
  { event: 'stale', version: 1, workerId: 'worker-a', reason: 'status' },
];

/** The stalled worker's lease: short, so it runs out within the test; renewals every 100 ms until held. */
const LEASE_MS = 300;

/**
 * docs/spec.md §3.2 step 4, §3.8: a worker that is alive but silent for longer than its lease (starved of
 * CPU, stopped, cut off) loses its run. The reconciler settles the expired lease — at-least-once: put back
 * to run again, and another worker runs it; at-most-once: recorded lost. When the first worker comes back
 * and its handler ends, its completion is stale: it never overwrites what the run again (or the lost
 * settlement) recorded. The ledger says why the timer ran twice: a `lost` entry, reason `requeued`, naming
 * the first worker. Here worker A is a real runner whose lease renewals are held back (its event loop
 * goes on, as a starved one's would not, but nothing of its run reaches Redis); worker B takes the run.
 */
describe('a run whose live worker went silent past its lease', () => {
  afterEach(() => jest.restoreAllMocks());

  /** Holds every lease renewal of `workerId` until `released` opens; counts those answered lost. */
  function holdRenewals(workerId: string) {
    const released = gate();
    const answers: string[] = [];
    const renew = FireCommands.prototype.renewLeases;
    jest.spyOn(FireCommands.prototype, 'renewLeases').mockImplementation(async function (
      this: FireCommands,
      ...args: Parameters<FireCommands['renewLeases']>
    ) {
      if (args[2] !== workerId) return renew.apply(this, args);
      await released.promise;
      const renewals = await renew.apply(this, args);
      answers.push(...renewals);
      return renewals;
    });
    return { release: () => released.open(), answers };
  }

  /** Stale counts a runner told its observer. */
  function staleCounts() {
    const stale: SundialObserverEvents['stale'][] = [];
    return { stale, observer: { stale: (event: SundialObserverEvents['stale']) => void stale.push(event) } };
  }

  /**
   * Worker A (consumers external: it takes only the job the test hands it) claims `spec`'s first run and
   * its handler waits for `a.open()`; its renewals are held; the lease expires.
   */
  async function stalledRun(cluster: FireCluster, spec: Partial<TimerSpec>) {
    const a = gate();
    const calls: TimerContext<JsonValue>[] = [];
    // ends when the test says; fails if its signal aborted meanwhile (as the chaos suite's `slow` does)
    const onA = recorder(async (ctx) => {
      calls.push(ctx);
      await a.promise;
      if (ctx.signal.aborted) throw new Error('aborted');
    });
    const aStale = staleCounts();
    const runnerA: TimerRunner = await cluster.runner(
      { h: onA.handler },
      { workerId: 'worker-a', leaseMs: LEASE_MS, consumers: 'external', observer: aStale.observer },
    );
    const held = holdRenewals('worker-a');
    const timer = await cluster.timers.schedule({ key: 'k', handler: 'h', delay: 0, ...spec });
    void runnerA.processFireJob(0, { timers: [refOf(timer)] });
    await waitFor(() => calls.length === 1, { what: "worker A's run" });
    await leaseExpired(cluster, fire.raw, spec.awaitTask === false ? 'k|1' : 'k');
    return { a, calls, held, aStale, timer };
  }

  /** Worker B (a runner of its own) takes the run put back; its run of v1 waits for `b.open()`. */
  async function runAgainOnB(cluster: FireCluster) {
    const b = gate();
    const onB = recorder((ctx) => (ctx.version === 1 ? b.promise : undefined));
    const rerun = () => onB.calls.find((ctx) => ctx.version === 1);
    await cluster.dispatcher();
    // (B's lease the default 30 s: a B stalled past a short one on a loaded host would lose the run again)
    await cluster.runner({ h: onB.handler }, { workerId: 'worker-b' });
    await waitFor(rerun, { what: "worker B's run" });
    return { b, rerun: () => rerun()! };
  }

  /**
   * A comes back: its renewal finds the lease gone (its run aborts), its handler ends, and its
   * completion of v1 is stale (event, and its own metrics).
   */
  async function aComesBack(cluster: FireCluster, stalled: Awaited<ReturnType<typeof stalledRun>>) {
    stalled.held.release();
    await waitFor(() => stalled.held.answers.includes('lost'), { what: "A's renewal" });
    expect(stalled.calls[0].signal.aborted).toBe(true);
    stalled.a.open();
    expect(await eventually(cluster.events, { type: 'stale', key: 'k' })).toMatchObject({
      version: 1,
      reason: 'status',
    });
    expect(stalled.aStale.stale).toEqual([{ reason: 'status', phase: 'complete' }]);
  }

  /** The ledger oldest first, as `{ event, version, workerId, reason }`. */
  async function story(cluster: FireCluster): Promise<Partial<LedgerEntry>[]> {
    return (await cluster.timers.history('k'))
      .reverse()
      .map(({ event, version, workerId, reason }) =>
        JSON.parse(JSON.stringify({ event, version, workerId, reason })),
      );
  }

  /**
   * An awaitTask:false interval whose first tick (v1; ticks every second, the first 1 s after creation:
   * A waits for it) A claims and goes silent on; the reconciler puts the tick back.
   */
  async function stalledTick() {
    const cluster = await fire.cluster();
    // deadline: A waits the 1 s to the first tick's due
    const spec = { every: 1_000, awaitTask: false, delay: undefined, removeOnComplete: false };
    const stalled = await stalledRun(cluster, spec);
    expect(await cluster.reconciler().reconcileOnce()).toEqual({ rearmed: 0, requeued: 1, lost: 0 });
    return { cluster, stalled };
  }

  /** A held one-shot A claims and goes silent on; the reconciler puts it back. */
  async function stalledOneShot() {
    const cluster = await fire.cluster();
    const stalled = await stalledRun(cluster, { removeOnComplete: false });
    expect(await cluster.reconciler().reconcileOnce()).toEqual({ rearmed: 0, requeued: 1, lost: 0 });
    return { cluster, stalled };
  }

  /** The first tick's ledger entries, oldest first, without its skipped slots. */
  async function firstTick(cluster: FireCluster): Promise<Partial<LedgerEntry>[]> {
    return (await story(cluster)).filter((entry) => entry.version === 1 && entry.event !== 'skipped');
  }

  it('at-least-once: run again on another worker; the first run ending late is stale, the second run is the outcome', async () => {
    const cluster = await fire.cluster();
    const stalled = await stalledRun(cluster, { removeOnComplete: false });
    const reconciled: SundialObserverEvents['reconciled'][] = [];
    const reconciler = cluster.reconciler({ observer: { reconciled: (counts) => reconciled.push(counts) } });
    expect(await reconciler.reconcileOnce()).toEqual({ rearmed: 0, requeued: 1, lost: 0 });
    const { b, rerun } = await runAgainOnB(cluster);
    await aComesBack(cluster, stalled);
    // the run again is still going: A's late completion changed nothing
    expect(await cluster.timers.get('k')).toMatchObject({ status: 'running', runCount: 2 });
    b.open();
    await eventually(cluster.events, { type: 'completed', key: 'k' });
    expect([stalled.calls[0].runCount, rerun().runCount]).toEqual([1, 2]);
    expect(await cluster.timers.get('k')).toMatchObject({
      status: 'completed',
      runCount: 2,
      last: { status: 'ok' },
    });
    expect(matching(cluster.events, { type: 'completed', key: 'k' })).toHaveLength(1);
    expect(matching(cluster.events, { type: 'failed', key: 'k' })).toEqual([]);
    expect(await story(cluster)).toEqual([
      ...RUN_AGAIN,
      { event: 'completed', version: 1, workerId: 'worker-b' },
    ]);
    expect(reconciled).toEqual([{ rearmed: 0, requeued: 1, lost: 0 }]);
  });

  it('at-most-once: recorded lost, never run again; the first run ending late is stale and the row stays lost', async () => {
    const cluster = await fire.cluster();
    const stalled = await stalledRun(cluster, { delivery: 'at-most-once', removeOnComplete: false });
    expect(await cluster.reconciler().reconcileOnce()).toEqual({ rearmed: 0, requeued: 0, lost: 1 });
    expect(await eventually(cluster.events, { type: 'failed', key: 'k' })).toMatchObject({
      error: { reason: 'lost' },
    });
    await aComesBack(cluster, stalled);
    expect(await cluster.timers.get('k')).toMatchObject({
      status: 'failed',
      runCount: 1,
      last: { status: 'failed', error: { reason: 'lost' } },
    });
    expect(matching(cluster.events, { type: 'completed', key: 'k' })).toEqual([]);
    expect(await story(cluster)).toEqual([
      { event: 'scheduled', version: 1 },
      { event: 'claimed', version: 1, workerId: 'worker-a' },
      { event: 'lost', version: 1, workerId: 'worker-a', reason: 'lost' },
      { event: 'stale', version: 1, workerId: 'worker-a', reason: 'status' },
    ]);
  });

  it('an awaitTask:false tick: run again on another worker; the first run ending late is stale', async () => {
    const { cluster, stalled } = await stalledTick();
    const { b, rerun } = await runAgainOnB(cluster);
    await aComesBack(cluster, stalled);
    b.open();
    await eventually(cluster.events, { type: 'completed', key: 'k', version: 1 });
    expect([stalled.calls[0], rerun()].map((ctx) => [ctx.version, ctx.runCount])).toEqual([
      [1, 1],
      [1, 2],
    ]);
    expect(matching(cluster.events, { type: 'completed', key: 'k', version: 1 })).toHaveLength(1);
    expect(matching(cluster.events, { type: 'failed', key: 'k' })).toEqual([]);
    expect(await firstTick(cluster)).toEqual([
      ...RUN_AGAIN,
      { event: 'completed', version: 1, workerId: 'worker-b' },
    ]);
  });

  it.each([
    ['a held one-shot', false],
    ['an awaitTask:false tick', true],
  ])(
    '%s whose worker comes back before the run again is claimed: its completion is stale, it runs again',
    async (_, free) => {
      const { cluster, stalled } = free ? await stalledTick() : await stalledOneShot();
      // A comes back while no worker took the run put back yet: its renewal finds the lease gone and aborts
      // the run; its handler, as the chaos suite's does, fails when aborted
      await aComesBack(cluster, stalled);
      // Before, a free run's completion of the aborted run was taken: the tick recorded failed ('aborted', an
      // abort Sundial made), and the run put back was answered stale, never run: at-least-once broken.
      expect(matching(cluster.events, { type: 'failed', key: 'k' })).toEqual([]);
      const { b, rerun } = await runAgainOnB(cluster);
      b.open();
      await eventually(cluster.events, { type: 'completed', key: 'k', version: 1 });
      expect(rerun().runCount).toBe(2);
      expect(matching(cluster.events, { type: 'failed', key: 'k' })).toEqual([]);
      expect(await firstTick(cluster)).toEqual([
        { event: 'scheduled', version: 1 },
        { event: 'claimed', version: 1, workerId: 'worker-a' },
        { event: 'lost', version: 1, workerId: 'worker-a', reason: 'requeued' },
        { event: 'stale', version: 1, workerId: 'worker-a', reason: 'status' },
        { event: 'armed', version: 1 },
        { event: 'claimed', version: 1, workerId: 'worker-b' },
        { event: 'completed', version: 1, workerId: 'worker-b' },
      ]);
    },
  );

  it('a lease that ran out and nobody settled is renewed when its worker comes back: the run is its', async () => {
    const cluster = await fire.cluster();
    const stalled = await stalledRun(cluster, { removeOnComplete: false });
    stalled.held.release();
    await waitFor(() => stalled.held.answers.includes('held'), { what: "A's renewal" });
    expect(await cluster.reconciler().reconcileOnce()).toEqual({ rearmed: 0, requeued: 0, lost: 0 });
    stalled.a.open();
    await eventually(cluster.events, { type: 'completed', key: 'k' });
    expect(stalled.calls[0].signal.aborted).toBe(false);
    expect(await cluster.timers.get('k')).toMatchObject({ status: 'completed', runCount: 1 });
    expect((await story(cluster)).map((entry) => entry.event)).toEqual(['scheduled', 'claimed', 'completed']);
  });
});
