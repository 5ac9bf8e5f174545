/**
 * docs/spec.md §3.4 on every backend: a periodic timer's run moved by `reschedule` is the caller's run,
 * not a slot — moved to a past `at` it runs at once with that due whatever its catch-up policy, and the
 * slots before the reschedule (run already, or moved over) are not counted as skipped after it.
 */
import type { TimerSpec } from '@sundial/core';
import { BACKENDS, useBackend } from './backends';

const HOUR = 3_600_000;

const SCHEDULES: Array<[string, Partial<TimerSpec>]> = [
  ['an interval', { every: '1h' }],
  ['a cron with a catchupWindow', { cron: '0 * * * *', tz: 'UTC', catchupWindow: '1h' }],
  ["a cron with catchup 'skip'", { cron: '0 * * * *', tz: 'UTC', catchup: 'skip' }],
  // 'all' went on to run the slots between the moved due and the reschedule (slots that had run, too)
  ["a cron with catchup 'all'", { cron: '0 * * * *', tz: 'UTC', catchup: 'all', catchupWindow: '1d' }],
];

describe.each(BACKENDS)('%s backend: a run moved to a past at', (name) => {
  const backend = useBackend(name);

  describe.each(SCHEDULES)('%s', (_kind, schedule) => {
    it('runs at once with that due, and counts no slot before the reschedule as skipped', async () => {
      const h = await backend.open();
      await h.timers.schedule({ key: 'm', handler: 'work', ...schedule } as TimerSpec);
      const at = (await h.now()) - 2.5 * HOUR;
      const moved = await h.timers.reschedule('m', { at });
      await h.event({ type: 'completed', key: 'm' });
      expect(h.runs.map((run) => run.due)).toEqual([at]);
      const history = await h.timers.history('m');
      expect(history.filter((entry) => entry.event === 'skipped')).toEqual([]);
      expect(h.eventsOf('skipped')).toEqual([]);
      const row = await h.timers.get('m');
      expect(row!.dueAt).toBeGreaterThan(moved.scheduledAt);
      expect(row!.dueAt).toBeLessThanOrEqual(moved.scheduledAt + HOUR);
    });
  });
});

describe.each(BACKENDS)('%s backend: a backfill while a moved run waits', (name) => {
  const backend = useBackend(name);

  it('goes back to that run at its own due: no jitter, not passed as late', async () => {
    const h = await backend.open();
    const spec = { every: 1_000, jitter: 900, catchup: 'skip', payload: { sleepMs: 300 } } as const;
    await h.timers.schedule({ key: 'b', handler: 'work', ...spec });
    const at = (await h.now()) + 200;
    const moved = await h.timers.reschedule('b', { at });
    // two grid slots before the reschedule, 300 ms each: the moved due passes while they run
    const from = moved.scheduledAt - 2_500;
    expect(await h.timers.backfill('b', { from, to: moved.scheduledAt - 1 })).toEqual({ slots: 2 });
    await h.until(() => h.runs.length === 3, { what: 'the backfill runs and the moved run' });
    expect(h.runs.map((run) => run.due)).toEqual([from + 500, from + 1_500, at]);
    expect(h.eventsOf('skipped')).toEqual([]);
  });
});
