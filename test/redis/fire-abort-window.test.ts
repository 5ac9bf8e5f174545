import type { TimerSpec } from '@sundial/core';
import { FireCommands, type TimerRef } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { LeaseKeeper } from '../../libs/redis/src/fire/lease-keeper';
import { type FireCluster, recorder, useFirePath, work } from './fire-fixture';

const fire = useFirePath();

/**
 * docs/spec.md §4.5: an abort published between a claim in Redis and the run's registration with its
 * worker's lease keeper (the claim's answer on its way back, or a cron's detach's) must still reach the run.
 * That answer is held here until the runner's keeper has heard the abort, so the window is hit every time.
 */
describe('fire path: an abort heard before a claimed run is registered', () => {
  afterEach(() => jest.restoreAllMocks());

  /** Which key a claim's or a detach's call is for (its refs, its run). */
  const callFor = {
    claim: (args: unknown[]) => (args[3] as TimerRef[]).map((ref) => ref.key),
    detach: (args: unknown[]) => [(args[2] as TimerRef).key],
  };

  /** Holds the first `method` answer for `key` until `inWindow` ran and the runner's keeper heard an abort. */
  function holdAnswer(method: keyof typeof callFor, key: string, inWindow: () => Promise<unknown>): void {
    const heard: string[] = [];
    const keeper = LeaseKeeper.prototype as unknown as { onAbort(message: string): void };
    const onAbort = keeper.onAbort;
    jest.spyOn(keeper, 'onAbort').mockImplementation(function (this: LeaseKeeper, message: string) {
      heard.push(message);
      onAbort.call(this, message);
    });
    const commands = FireCommands.prototype as unknown as Record<
      keyof typeof callFor,
      (...args: unknown[]) => Promise<unknown>
    >;
    const original = commands[method];
    let held = false;
    jest.spyOn(commands, method).mockImplementation(async function (this: FireCommands, ...args: unknown[]) {
      const answer = await original.apply(this, args);
      if (!held && callFor[method](args).includes(key)) {
        held = true;
        await inWindow();
        await waitFor(() => heard.length > 0, { timeoutMs: 2000, what: 'the keeper heard the abort' });
      }
      return answer;
    });
  }

  /**
   * A handler that waits on its signal; `aborted` says, per call, whether it was aborted within 10 s. A
   * signal may be aborted before the handler starts (its abort event then already went): checked first.
   */
  function waiter() {
    const aborted: boolean[] = [];
    const job = recorder((ctx, call) =>
      (ctx.signal.aborted ? Promise.reject(ctx.signal.reason as Error) : work(ctx.signal, 10_000)).then(
        () => (aborted[call - 1] = false),
        (error: Error) => {
          aborted[call - 1] = true;
          throw error;
        },
      ),
    );
    return { ...job, aborted };
  }

  /**
   * A runner with `leaseMs` whose first `held` call for `spec.key` is answered only after `change` ran on the
   * timer and the runner's keeper heard its abort; returns once that run's signal aborted (a deadline 1 s
   * past the change).
   */
  async function abortedInWindow(
    held: keyof typeof callFor,
    leaseMs: number,
    spec: TimerSpec,
    change: (timers: FireCluster['timers']) => Promise<unknown>,
  ) {
    const cluster = await fire.cluster();
    const job = waiter();
    await cluster.dispatcher();
    await cluster.runner({ h: job.handler }, { leaseMs });
    let changedAt: number | undefined;
    holdAnswer(held, spec.key, () => {
      changedAt = Date.now();
      return change(cluster.timers);
    });
    // The spec's second counts from the change, not from the due: a loaded host's hand-off and claim may
    // come a second or more after the due (an every-second cron's first slot may also be up to a second
    // away: a deadline counted from the schedule call failed in CI when the slot came ~0.9 s after it).
    const { dueAt } = await cluster.timers.schedule(spec);
    const changed = await waitFor(() => changedAt, {
      timeoutMs: Math.max(0, dueAt - Date.now()) + 10_000, // deadline: the claim, however late
      what: `the change to ${spec.key} in the window`,
    });
    const timeoutMs = Math.max(0, changed + 1000 - Date.now()); // deadline: the spec's second
    await waitFor(() => job.aborted[0], { timeoutMs, what: `the run of ${spec.key} aborted` });
    expect(job.calls[0].signal.reason).toMatchObject({ name: 'AbortError' });
    return { cluster, job };
  }

  it('a free run (awaitTask:false interval) paused in the window: its signal aborts', async () => {
    // the next renewal (which would abort it too: fire-abort-lost.test.ts) is 10 s away: only the abort
    // heard in the window can stop the run within the spec's second
    const spec = { key: 'f', handler: 'h', every: 200, awaitTask: false };
    const { cluster, job } = await abortedInWindow('claim', 30_000, spec, (timers) => timers.pause('f'));
    // the abort it heard names versions up to the paused one: the resumed timer's next run goes on
    const resumed = await cluster.timers.resume('f');
    await waitFor(() => job.calls.length > 1, { timeoutMs: 2000, what: 'a run after resume' });
    expect(job.calls[1].version).toBeGreaterThanOrEqual(resumed.version);
    expect(job.calls[1].signal.aborted).toBe(false);
  });

  it('a held run cancelled in the window: its signal aborts at once, not at the next lease renewal', async () => {
    // the next renewal is 10 s away: only the abort message can stop the run within the spec's second
    const spec = { key: 'o', handler: 'h', delay: 50 };
    const { job } = await abortedInWindow('claim', 30_000, spec, (timers) => timers.cancel('o'));
    expect(job.calls).toHaveLength(1);
  });

  it('a cron run paused while its detach is answered (it runs free): its signal aborts', async () => {
    // the detached run's lease survives the pause, and its next renewal is 10 s away: only the abort heard
    // in the window can stop it within the spec's second
    const spec = { key: 'c', handler: 'h', cron: '* * * * * *', tz: 'UTC', overlap: 'allow' as const };
    await abortedInWindow('detach', 30_000, spec, (timers) => timers.pause('c'));
  });
});
