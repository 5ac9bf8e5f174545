import type { SundialObserverEvents } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { recorder, useFirePath, work } from './fire-fixture';

const fire = useFirePath();
const HOUR = 3_600_000;

/**
 * docs/spec.md §6.1 `sundial_fire_lateness_seconds`: a backfill asks for past slots now, so its runs
 * are late from when they were asked for, not from their slots; so is a timer given a past `at`. Counted from the slot, a backfill of
 * the last two days observed each slot's age (millions of seconds, most in +Inf) and could raise
 * SundialFireLatenessHigh although nothing was late.
 */
describe('fire path: the lateness of backfill runs', () => {
  function runsObserved() {
    const runs: SundialObserverEvents['runFinished'][] = [];
    return { runs, observer: { runFinished: (run: SundialObserverEvents['runFinished']) => runs.push(run) } };
  }

  it('a backfill of past slots observes a lateness near 0, not the age of the slots', async () => {
    const cluster = await fire.cluster();
    const { runs, observer } = runsObserved();
    const work = recorder();
    await cluster.dispatcher();
    await cluster.runner({ work: work.handler }, { observer });
    const timer = await cluster.timers.schedule({ key: 'daily', handler: 'work', every: '1h' });
    // the grid slots anchor − 3h, − 2h, − 1h
    const range = { from: timer.scheduledAt - 3 * HOUR, to: timer.scheduledAt - HOUR };
    expect(await cluster.timers.backfill('daily', range)).toEqual({ slots: 3 });
    await waitFor(() => runs.length === 3, { what: 'three backfill runs observed' });
    // each run keeps its slot as its due ...
    expect(work.calls.map((ctx) => timer.scheduledAt - ctx.due)).toEqual([3 * HOUR, 2 * HOUR, HOUR]);
    // ... and is late by the hand-off and the claim only (seconds at most on a busy host), not by hours
    for (const run of runs) expect(run.latenessMs).toBeLessThan(10_000);
  });

  it('a one-shot scheduled (or rescheduled) for a time already past observes a lateness near 0, not its age', async () => {
    const cluster = await fire.cluster();
    const { runs, observer } = runsObserved();
    await cluster.dispatcher();
    await cluster.runner({ work: recorder().handler }, { observer });
    const past = (await cluster.redisNow()) - HOUR;
    await cluster.timers.schedule({ key: 'overdue-invoice', handler: 'work', at: past });
    const moved = await cluster.timers.schedule({ key: 'moved', handler: 'work', delay: '1h' });
    await cluster.timers.reschedule(moved.key, { at: past });
    await waitFor(() => runs.length === 2, { what: 'the two runs observed' });
    for (const run of runs) expect(run.latenessMs).toBeLessThan(10_000);
  });

  // overlap 'buffer-one' runs the slot that came during a run right after it, due at that slot: counted
  // from the slot, a cron whose runs outlast its period observed each overrun as lateness (seconds) and
  // could raise SundialFireLatenessHigh ("workers cannot keep up") although every run started at once.
  it("a slot overlap 'buffer-one' kept runs when the run before it ends: late from then, not from its slot", async () => {
    const cluster = await fire.cluster();
    const { runs, observer } = runsObserved();
    // the first run outlasts 5 slots of its per-second cron; the buffered one ends at once
    const slow = recorder((ctx, call) => (call === 1 ? work(ctx.signal, 6_000) : undefined)); // the run's length: slots pass
    await cluster.dispatcher();
    await cluster.runner({ slow: slow.handler }, { observer });
    const spec = { cron: '* * * * * *', tz: 'UTC', overlap: 'buffer-one', maxRuns: 2 } as const;
    await cluster.timers.schedule({ key: 'buffered', handler: 'slow', ...spec });
    // deadline: the first run takes 6 s
    await waitFor(() => runs.length === 2, { timeoutMs: 20_000, what: 'the two runs observed' });
    const [first, buffered] = slow.calls;
    expect(buffered.due).toBe(first.due + 1_000); // the buffered slot, with its own due
    // late by the hand-off and the claim after the first run ended, not by the first run's 5 s overrun
    expect(runs[1].latenessMs).toBeLessThan(3_000);
  });

  it('a run that is late by its schedule still observes its lateness', async () => {
    const cluster = await fire.cluster();
    const { runs, observer } = runsObserved();
    await cluster.dispatcher();
    const timer = await cluster.timers.schedule({ key: 'late', handler: 'work', delay: 100 });
    // No worker until 1 s after the due.
    await waitFor(async () => (await cluster.redisNow()) >= timer.dueAt + 1000, {
      intervalMs: 20,
      what: 'late',
    });
    await cluster.runner({ work: recorder().handler }, { observer });
    await waitFor(() => runs.length === 1, { what: 'the late run observed' });
    expect(runs[0].latenessMs).toBeGreaterThanOrEqual(1000);
  });
});
