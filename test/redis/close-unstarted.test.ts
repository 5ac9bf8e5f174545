import type { SundialLogger } from '@sundial/core';
import { FireCommands, type SundialObserver } from '@sundial/redis';
import type { TimerSpec } from '@sundial/core';
import { waitFor } from '@sundial/testing/harness';
import { type ActiveRun, LeaseKeeper } from '../../libs/redis/src/fire/lease-keeper';
import { eventually, matching, recorder, refOf, useFirePath } from './fire-fixture';

const fire = useFirePath();

function warnings(): SundialLogger & { warned: string[] } {
  const warned: string[] = [];
  const none = () => undefined;
  return { warned, debug: none, info: none, error: none, warn: (message) => void warned.push(message) };
}

/** The runs a runner's reconciles put back to run again, or recorded lost, as its metrics count them. */
function reconciledCounts() {
  const counts: Record<string, number> = {};
  const observer: SundialObserver = {
    reconciled: ({ requeued, lost }) => {
      counts.requeued = (counts.requeued ?? 0) + requeued;
      counts.lost = (counts.lost ?? 0) + lost;
    },
  };
  return { counts, observer };
}

/**
 * An at-most-once run claimed ahead of its due (docs/spec.md §3.2) whose worker's grace ends before that
 * due is handed back unstarted (§4.6): its handler never ran, so running it on another worker keeps it at
 * most once. Its record says so — put back to run again (`requeued`), not `failed` with reason `lost` — and
 * it runs once, elsewhere. Before, it was recorded lost and never ran, as if its worker had died mid-run.
 */
describe('fire path: an at-most-once run handed back before it started', () => {
  /**
   * A runner claiming 50 ms ahead, closed (grace 0) as the run of `key` is leased, while it waits for the
   * due it was claimed ahead of; what it logged and counted, and the handler it had.
   */
  async function handedBackUnstarted(spec: Omit<TimerSpec, 'handler'> & { key: string }) {
    // The scenario needs the close before the due: the claim goes 50 ms ahead, and the close's grace of 0
    // hands the run back after a 1 ms timer. On a host whose event loop stalled that long (seen at load
    // ~20: a claim 17 ms late, or a claim in time whose lease began past the due), the run started as it
    // should, before the close: another scenario, set up again on a fresh prefix (at most 3 times). A run
    // started though the close came 5 ms or more before its due still fails below.
    for (let attempt = 1; ; attempt++) {
      const run = await closedWhileWaiting(spec);
      if (run.closedAt < run.dueAt - 5 || attempt === 3) return expectHandedBack(spec, run);
    }
  }

  /** The runner closed as the run of `spec.key` is leased, while it waits for the due it was claimed ahead of. */
  async function closedWhileWaiting(spec: Omit<TimerSpec, 'handler'> & { key: string }) {
    const cluster = await fire.cluster();
    const first = recorder();
    const logger = warnings();
    const { counts, observer } = reconciledCounts();
    await cluster.dispatcher();
    const runner = await cluster.runner({ h: first.handler }, { claimAheadMs: 50, observer, logger });
    let closed: Promise<void> | undefined;
    let closedAt = Infinity;
    const add = LeaseKeeper.prototype.add;
    jest.spyOn(LeaseKeeper.prototype, 'add').mockImplementation(function (this: LeaseKeeper, run: ActiveRun) {
      add.call(this, run);
      if (run.key !== spec.key || closed) return;
      closedAt = Date.now();
      closed = runner.close(0);
    });
    const { dueAt } = await cluster.timers.schedule({ ...spec, handler: 'h', delivery: 'at-most-once' });
    await waitFor(() => closed !== undefined, { what: 'the close during the wait' });
    await closed;
    jest.restoreAllMocks();
    return { cluster, first, logger, counts, closedAt, dueAt };
  }

  /** What the runner of `run` logged and counted, and the handler it had: handed back unstarted. */
  function expectHandedBack(
    spec: { key: string },
    { cluster, first, logger, counts }: Awaited<ReturnType<typeof closedWhileWaiting>>,
  ) {
    expect(first.calls).toHaveLength(0);
    expect(counts).toEqual({ requeued: 1, lost: 0 });
    expect(logger.warned.filter((line) => /handed back/.test(line))).toEqual([
      `Sundial worker: 1 run still going at the end of the shutdown grace, aborted and handed back; at-least-once or not started, they run again on another worker: ${spec.key}`,
    ]);
    expect(matching(cluster.events, { type: 'failed', key: spec.key })).toEqual([]);
    return cluster;
  }

  it('a held run: put back to run again, not recorded lost, and runs once on the next worker', async () => {
    const cluster = await handedBackUnstarted({ key: 'once', delay: 300, removeOnComplete: false });
    expect(await cluster.timers.get('once')).toMatchObject({ status: 'pending' });
    const next = recorder();
    await cluster.runner({ h: next.handler });
    await eventually(cluster.events, { type: 'completed', key: 'once' });
    expect(next.calls).toHaveLength(1);
  });

  it('a free run (an awaitTask: false tick): put back to run again, and its tick runs on the next worker', async () => {
    const cluster = await handedBackUnstarted({
      key: 'tick',
      every: 1_000,
      awaitTask: false,
    });
    const next = recorder();
    await cluster.runner({ h: next.handler });
    // deadline: the tick handed back runs within a second, the next at its slot
    await waitFor(() => next.calls.length > 0 || undefined, { what: 'the tick run again' });
  });

  /**
   * The closing worker's release marks the unstarted run (`hb`), and its reconcile follows: a claim of the
   * run's redelivered fire job by another worker in between (BullMQ's stalled check hands the job on) finds
   * a running row whose lease just expired. Before, claim.lua settled it `lost` (at-most-once) without
   * looking at the mark, which only the reconcile read: a run that never started was recorded lost and
   * never ran. Now the claim takes it over to run, as the reconcile would have put it back.
   */
  it('a held run claimed by another worker between the release and the reconcile: taken over to run there, not lost', async () => {
    const cluster = await fire.cluster();
    const first = recorder();
    const { counts, observer } = reconciledCounts();
    await cluster.dispatcher();
    const runner = await cluster.runner({ h: first.handler }, { claimAheadMs: 50, observer });
    const timer = await cluster.timers.schedule({
      key: 'once',
      handler: 'h',
      delay: 300,
      delivery: 'at-most-once',
      removeOnComplete: false,
    });
    let closed: Promise<void> | undefined;
    const add = LeaseKeeper.prototype.add;
    jest.spyOn(LeaseKeeper.prototype, 'add').mockImplementation(function (this: LeaseKeeper, run: ActiveRun) {
      add.call(this, run);
      if (run.key === 'once') closed ??= runner.close(0);
    });
    // the other worker's claim, as the closing worker's release is answered (before its reconcile)
    let between: Awaited<ReturnType<FireCommands['claim']>> | undefined;
    const release = FireCommands.prototype.release;
    jest.spyOn(FireCommands.prototype, 'release').mockImplementation(async function (
      this: FireCommands,
      ...args: Parameters<FireCommands['release']>
    ) {
      const released = await release.apply(this, args);
      between ??= await cluster.commands.claim(0, 30_000, 'other', [refOf(timer)]);
      return released;
    });
    await waitFor(() => closed !== undefined, { what: 'the close during the wait' });
    await closed;
    jest.restoreAllMocks();

    expect(first.calls).toHaveLength(0);
    expect(between).toEqual([expect.objectContaining({ kind: 'claimed', mode: 'held', requeued: true })]);
    // the closing worker's reconcile found it claimed: nothing for it to settle
    expect(counts).toEqual({ requeued: 0, lost: 0 });
    expect(matching(cluster.events, { type: 'failed', key: 'once' })).toEqual([]);
    expect(await cluster.timers.get('once')).toMatchObject({ status: 'running', runCount: 2 });
    const story = (await cluster.timers.history('once')).reverse();
    expect(story.map((entry) => [entry.event, entry.reason, entry.workerId])).toEqual([
      ['scheduled', undefined, undefined],
      ['armed', undefined, undefined],
      ['claimed', undefined, runner.workerId],
      ['lost', 'requeued', runner.workerId],
      ['claimed', undefined, 'other'],
    ]);
  });
});
