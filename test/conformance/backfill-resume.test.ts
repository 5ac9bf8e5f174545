/**
 * docs/spec.md §3.3c on every backend: after a backfill "the schedule goes on at the slot that was armed
 * … or at the run a `reschedule` moved", as that run would have gone on without it — a run moved to a past
 * `at` still counts its skips from the reschedule (§3.4), and a pending retry is still that slot's next try
 * (§3.3b). The backfill's own runs are first tries that count in runCount.
 */
import type { TimerContext, TimerSpec } from '@sundial/core';
import { BACKENDS, useBackend } from './backends';

const HOUR = 3_600_000;

const SCHEDULES: Array<[string, Partial<TimerSpec>]> = [
  ['an interval', { every: '1h' }],
  ["a cron with catchup 'skip'", { cron: '0 * * * *', tz: 'UTC', catchup: 'skip' }],
  ["a cron with catchup 'all'", { cron: '0 * * * *', tz: 'UTC', catchup: 'all', catchupWindow: '1d' }],
];

describe.each(BACKENDS)('%s backend: a backfill before a run moved to a past at', (name) => {
  const backend = useBackend(name);

  describe.each(SCHEDULES)('%s', (_kind, schedule) => {
    it('goes back to that run, which counts no slot before the reschedule as skipped', async () => {
      const h = await backend.open();
      await h.timers.schedule({ key: 'm', handler: 'work', ...schedule } as TimerSpec);
      const at = (await h.now()) - 2.5 * HOUR;
      const slots = await h.held(async () => {
        const moved = await h.timers.reschedule('m', { at });
        // one slot, hours before the moved run (an hour less a ms holds one of either grid)
        const from = moved.scheduledAt - 5 * HOUR;
        return (await h.timers.backfill('m', { from, to: from + HOUR - 1 })).slots;
      });
      expect(slots).toBe(1);
      await h.eventsOnceCome('completed', 2);
      expect(h.runs.map((run) => run.due).at(-1)).toBe(at);
      const history = await h.timers.history('m');
      expect(history.filter((entry) => entry.event === 'skipped')).toEqual([]);
      expect(h.eventsOf('skipped')).toEqual([]);
      expect(h.runs).toHaveLength(2);
    });
  });
});

describe.each(BACKENDS)('%s backend: a backfill while a retry waits', (name) => {
  const backend = useBackend(name);

  it('runs its slots as first tries, then the retry as the try it was', async () => {
    const runs: Array<Pick<TimerContext, 'attempt' | 'runCount' | 'due'>> = [];
    const flaky = async (_payload: unknown, { attempt, runCount, due }: TimerContext) => {
      runs.push({ attempt, runCount, due });
      if (runs.length === 1) throw new Error('once');
    };
    const h = await backend.open({ handlers: { flaky } });
    // the backoff leaves the backfill call time to come first (Redis: the dispatcher's stop, a few ms)
    const retry = { attempts: 3, backoff: { type: 'fixed', delay: 500 } } as const;
    await h.timers.schedule({ key: 'r', handler: 'flaky', every: '1h', retry });
    await h.timers.reschedule('r', { delay: 10 });
    const failure = await h.event({ type: 'failed', key: 'r' });
    await h.held(async () => {
      const from = (await h.now()) - 5 * HOUR;
      expect(await h.timers.backfill('r', { from, to: from + HOUR - 1 })).toEqual({ slots: 1 });
    });
    await h.eventsOnceCome('completed', 2);
    // the moved run's first try; the backfill slot's first try, a run more; the moved run's second try
    expect(runs.map(({ attempt, runCount }) => [attempt, runCount])).toEqual([
      [1, 1],
      [1, 2],
      [2, 2],
    ]);
    expect(runs[2].due).toBe(failure.at + 500);
    expect((await h.timers.get('r'))!.runCount).toBe(2);
  });
});

describe.each(BACKENDS)('%s backend: a backfill slot retried', (name) => {
  const backend = useBackend(name);

  describe.each(SCHEDULES)('%s', (_kind, schedule) => {
    it('skips nothing: its retry is that slot run again, then the schedule goes on', async () => {
      let runs = 0;
      const flaky = async () => {
        runs += 1;
        if (runs === 1) throw new Error('once');
      };
      const h = await backend.open({ handlers: { flaky } });
      const retry = { attempts: 2, backoff: { type: 'fixed', delay: 100 } } as const;
      await h.timers.schedule({ key: 'f', handler: 'flaky', retry, ...schedule } as TimerSpec);
      const from = (await h.now()) - 5 * HOUR;
      expect(await h.timers.backfill('f', { from, to: from + HOUR - 1 })).toEqual({ slots: 1 });
      await h.eventsOnceCome('completed', 1);
      const history = await h.timers.history('f');
      expect(history.filter((entry) => entry.event === 'skipped')).toEqual([]);
      expect(h.eventsOf('skipped')).toEqual([]);
      const row = await h.timers.get('f');
      expect([row!.runCount, row!.status]).toEqual([1, 'pending']);
      expect(row!.dueAt).toBeGreaterThan(await h.now());
    });
  });
});

describe.each(BACKENDS)('%s backend: a backfill slot retried while a moved run waits', (name) => {
  const backend = useBackend(name);

  it('goes back to that run at its own due (no jitter) after the retry', async () => {
    let runs = 0;
    const dues: number[] = [];
    const flaky = async (_payload: unknown, { due }: TimerContext) => {
      dues.push(due);
      runs += 1;
      if (runs === 1) throw new Error('once');
    };
    const h = await backend.open({ handlers: { flaky } });
    const retry = { attempts: 2, backoff: { type: 'fixed', delay: 100 } } as const;
    const spec = { every: '1h', jitter: '30m', catchup: 'skip', retry } as const;
    await h.timers.schedule({ key: 'j', handler: 'flaky', ...spec });
    const at = (await h.now()) + 300;
    await h.held(async () => {
      const moved = await h.timers.reschedule('j', { at });
      const from = moved.scheduledAt - 5 * HOUR;
      expect(await h.timers.backfill('j', { from, to: from + HOUR - 1 })).toEqual({ slots: 1 });
    });
    await h.eventsOnceCome('completed', 2);
    // the backfill slot, its retry (due at its own time), then the moved run
    expect(dues).toHaveLength(3);
    expect(dues[2]).toBe(at);
  });
});

describe.each(BACKENDS)('%s backend: a backfill run that reaches pauseAfterFailures', (name) => {
  const backend = useBackend(name);

  it('pauses the timer as pause does: one version more, nothing armed first', async () => {
    const h = await backend.open();
    const spec = { cron: '0 * * * *', tz: 'UTC', pauseAfterFailures: 1, payload: { fail: 'no' } };
    const timer = await h.timers.schedule({ key: 'p', handler: 'work', ...spec });
    const from = (await h.now()) - 5 * HOUR;
    expect(await h.timers.backfill('p', { from, to: from + HOUR - 1 })).toEqual({ slots: 1 });
    const paused = await h.event({ type: 'paused', key: 'p' });
    // scheduled, backfilled, paused (the engine armed the schedule's slot again first: a version more)
    expect(paused.version).toBe(timer.version + 2);
    expect(await h.timers.get('p')).toMatchObject({ status: 'paused', version: timer.version + 2 });
    expect((await h.timers.resume('p')).version).toBe(timer.version + 3);
  });
});
