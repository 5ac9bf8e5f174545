import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { type JsonValue, SundialError, type TimerContext } from '@sundial/core';
import { FireCommands, RUN_TIMING_CHANNEL, type RunTiming, type TimerRef } from '@sundial/redis';
import { waitFor } from '@sundial/testing';
import { type ActiveRun, LeaseKeeper } from '../../libs/redis/src/fire/lease-keeper';
import { eventually, type FireCluster, recorder, redisNow, refOf, useFirePath } from './fire-fixture';

const fire = useFirePath();

/**
 * docs/spec.md §3.2, §4.2: a claim goes `claimAheadMs` before its timer's due; Redis accepts it that far
 * ahead at most and answers the time left to the due, and the handler starts no earlier than the due by
 * Redis's clock. A cancel or reschedule between the claim and the due meets a running timer.
 */
describe('fire path: claims sent ahead of the due', () => {
  afterEach(() => jest.restoreAllMocks());

  it('claims within the bound ahead (answering the time left, start fields at the due), refuses beyond it', async () => {
    const cluster = await fire.cluster();
    const near = await cluster.timers.schedule({ key: 'near', handler: 'h', delay: 2_000 });
    const far = await cluster.timers.schedule({ key: 'far', handler: 'h', delay: 2_000 });
    const [early] = await cluster.commands.claim(0, 30_000, 'w', [refOf(far)], false, 100);
    // too early by more than the bound: nothing claimed; the wait is to when the bound is reached
    expect(early.kind).toBe('early');
    const waitMs = early.kind === 'early' ? early.waitMs : NaN;
    expect(waitMs).toBeGreaterThan(1_500);
    expect(waitMs).toBeLessThanOrEqual(2_000 - 100);
    expect((await cluster.timers.get('far'))?.status).toBe('pending');

    const claimedAt = await redisNow(fire.raw);
    const [claimed] = await cluster.commands.claim(0, 30_000, 'w', [refOf(near)], false, 5_000);
    expect(claimed).toMatchObject({ kind: 'claimed', mode: 'held', due: near.dueAt });
    const leftMs = claimed.kind === 'claimed' ? claimed.leftMs : NaN;
    expect(leftMs).toBeGreaterThan(1_500);
    expect(leftMs).toBeLessThanOrEqual(near.dueAt - claimedAt);
    // running from the claim on; its start is recorded at the due, its claim when it happened
    const running = await cluster.timers.get('near');
    expect(running).toMatchObject({ status: 'running', runCount: 1, lastFiredAt: near.dueAt });
    expect(running?.last).toMatchObject({ started: near.dueAt, status: 'running' });
    expect(await eventually(cluster.events, { type: 'running', key: 'near' })).toMatchObject({
      at: near.dueAt,
      due: near.dueAt,
    });
    await cluster.commands.complete(0, [
      { ...refOf(near), runCount: 1, mode: 'held', outcome: 'ok', missed: 0, overlap: 0 },
    ]);
    const claimedEntry = (await cluster.timers.history('near')).find((entry) => entry.event === 'claimed');
    expect(Date.parse(claimedEntry?.at ?? '')).toBeLessThan(near.dueAt);
  });

  it('never starts a handler before its due by Redis clock, with claims 50 ms ahead', async () => {
    const cluster = await fire.cluster();
    const timings: RunTiming[] = [];
    const record = (message: unknown) => void timings.push(message as RunTiming);
    subscribe(RUN_TIMING_CHANNEL, record);
    try {
      // Redis's TIME read at the start is later than the start by at most a round trip: a run that
      // skipped its wait would start up to 50 ms early and show it.
      const starts: { key: string; due: number; claimedAt: number; at: number }[] = [];
      const job = recorder(async (ctx) =>
        starts.push({ key: ctx.key, due: ctx.due, claimedAt: ctx.claimedAt, at: await redisNow(fire.raw) }),
      );
      await cluster.dispatcher();
      await cluster.runner({ h: job.handler }, { claimAheadMs: 50 });
      const count = 40;
      for (let n = 0; n < count; n++)
        await cluster.timers.schedule({ key: `k${n}`, handler: 'h', delay: 300 + n * 7 });
      await waitFor(() => starts.length === count, { timeoutMs: 10_000, what: `${count} runs` });
      for (const start of starts) expect(start.at).toBeGreaterThanOrEqual(start.due);
      // the claims did go ahead: answers came with time left to the due (all of them on an idle host;
      // a loaded one stalls some wakes past it)
      const ahead = new Set(timings.filter((timing) => timing.leftMs > 0).map((timing) => timing.key));
      const claimedAhead = starts.filter((start) => ahead.has(start.key));
      expect(claimedAhead.length).toBeGreaterThan(0);
      // ctx.claimedAt is the claim's instant, not the start recorded at the due (lastFiredAt)
      for (const start of claimedAhead) {
        expect(start.claimedAt).toBeLessThan(start.due);
        expect(start.claimedAt).toBeGreaterThanOrEqual(start.due - 50);
      }
      for (const start of starts) expect(start.claimedAt).toBeLessThanOrEqual(start.at);
    } finally {
      unsubscribe(RUN_TIMING_CHANNEL, record);
    }
  });

  /**
   * A runner claiming 50 ms ahead whose first claim answer for `key` is held until `inWindow` ran, which
   * gets Redis's time then; resolves with that time and the claim's result.
   */
  function holdClaim(key: string, inWindow: () => Promise<void>): void {
    const commands = FireCommands.prototype as unknown as { claim(...args: unknown[]): Promise<unknown> };
    const original = commands.claim;
    let held = false;
    jest.spyOn(commands, 'claim').mockImplementation(async function (this: FireCommands, ...args: unknown[]) {
      const answer = await original.apply(this, args);
      if (!held && (args[3] as TimerRef[]).some((ref) => ref.key === key)) {
        held = true;
        await inWindow();
      }
      return answer;
    });
  }

  /**
   * A runner claiming 50 ms ahead, `change` done on the timer `key` (a one-shot due in 300 ms) while its
   * claim's answer is held: after the claim, before the handler starts. Resolves once it was called.
   */
  async function changedInWindow(
    key: string,
    behaviour: Parameters<typeof recorder>[0],
    change: (cluster: FireCluster) => Promise<void>,
  ) {
    const cluster = await fire.cluster();
    const job = recorder(behaviour);
    holdClaim(key, () => change(cluster));
    await cluster.dispatcher();
    await cluster.runner({ h: job.handler }, { claimAheadMs: 50 });
    const timer = await cluster.timers.schedule({ key, handler: 'h', delay: 300 });
    await waitFor(() => job.calls.length === 1, { timeoutMs: 5_000, what: `the run of ${key}` });
    return { cluster, job, timer };
  }

  /** The claim went before the due (its ledger entry's time, Redis's clock): the change met the window. */
  async function expectClaimedAhead(cluster: FireCluster, key: string, due: number): Promise<void> {
    const claimed = (await cluster.timers.history(key)).find((entry) => entry.event === 'claimed');
    expect(Date.parse(claimed?.at ?? '')).toBeLessThan(due);
  }

  it('a cancel between the claim and the due aborts the signal the handler starts with; the run is recorded', async () => {
    const throwIfAborted = (ctx: TimerContext<JsonValue>) => ctx.signal.throwIfAborted();
    const { cluster, job, timer } = await changedInWindow('o', throwIfAborted, async ({ timers, events }) => {
      expect(await timers.cancel('o')).toBe(true);
      // the runner hears the abort as soon as this subscriber does
      await eventually(events, { type: 'cancelled', key: 'o' });
    });
    expect(job.calls[0].signal.aborted).toBe(true);
    expect(job.calls[0].runCount).toBe(1);
    // claimed, then cancelled: what happened (newest first); the run's completion finds it gone
    await eventually(cluster.events, { type: 'stale', key: 'o' });
    const story = (await cluster.timers.history('o')).map((entry) => entry.event);
    expect(story).toEqual(['stale', 'cancelled', 'claimed', 'armed', 'scheduled']);
    await expectClaimedAhead(cluster, 'o', timer.dueAt);
  });

  it('a reschedule between the claim and the due is refused inactive; the run goes on', async () => {
    let refused: unknown;
    const { cluster, job, timer } = await changedInWindow('r', undefined, async ({ timers }) => {
      refused = await timers.reschedule('r', { delay: 60_000 }).catch((error: unknown) => error);
    });
    expect(refused).toBeInstanceOf(SundialError);
    expect(refused).toMatchObject({ reason: 'inactive' });
    expect(job.calls[0].signal.aborted).toBe(false);
    await waitFor(async () => (await cluster.timers.get('r')) === null, { what: 'the one-shot removed' });
    await expectClaimedAhead(cluster, 'r', timer.dueAt);
  });

  /**
   * A runner claiming 50 ms ahead, closed with `graceMs` once the run of a one-shot `s` (due in 300 ms)
   * is leased and waits for its due (TimerRunner leases it then); resolves when the close did.
   */
  async function closedInWait(graceMs: number) {
    const cluster = await fire.cluster();
    const job = recorder();
    await cluster.dispatcher();
    const runner = await cluster.runner({ h: job.handler }, { claimAheadMs: 50 });
    let closed: Promise<void> | undefined;
    const add = LeaseKeeper.prototype.add;
    jest.spyOn(LeaseKeeper.prototype, 'add').mockImplementation(function (this: LeaseKeeper, run: ActiveRun) {
      add.call(this, run);
      if (run.key === 's') closed = runner.close(graceMs);
    });
    const timer = await cluster.timers.schedule({ key: 's', handler: 'h', delay: 300 });
    await waitFor(() => closed !== undefined, { timeoutMs: 5_000, what: 'the close during the wait' });
    await closed;
    return { cluster, job, timer };
  }

  it('a close whose grace outlasts the wait lets the claimed run start and complete', async () => {
    const { cluster, job } = await closedInWait(10_000);
    expect(job.calls).toHaveLength(1);
    expect(job.calls[0].signal.aborted).toBe(false);
    expect(await cluster.timers.get('s')).toBeNull();
  });

  it('a close whose grace ends during the wait hands the claimed run back unstarted', async () => {
    const { cluster, job, timer } = await closedInWait(0);
    // past the due, with the runner's wait over: it never started, and its claim was released
    await waitFor(async () => (await redisNow(fire.raw)) > timer.dueAt + 100, { what: 'past the due' });
    expect(job.calls).toHaveLength(0);
    expect(await cluster.timers.get('s')).toMatchObject({ status: 'pending', version: timer.version });
  });
});
