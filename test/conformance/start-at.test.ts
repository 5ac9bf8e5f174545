/**
 * docs/spec.md §3.3c/§3.4 on every backend: no slot of a timer comes before its startAt. A run moved
 * before it (reschedule) or run out of band (trigger) runs where asked, and the slots after it start at
 * startAt — interval and cron, held and free runs, with jitter — as `next` lists them; a backfill runs no
 * slot before it. The engine's virtual-clock twin, with every policy: libs/core/src/engine/start-at.spec.ts.
 */
import type { TimerSpec } from '@sundial/core';
import { BACKENDS, type Harness, useBackend } from './backends';

/** The due times `next` lists, as numbers. */
async function listed(h: Harness, key: string, count: number): Promise<number[]> {
  return (await h.timers.next(key, { count })).map((time) => Date.parse(time.at));
}

/** The slot a run's due stands for: the grid slot at or before it (jitter moves a due, not its slot). */
const slotOf = (due: number, anchor: number, every: number) => due - ((due - anchor) % every);

describe.each(BACKENDS)('%s backend: no slot before startAt', (name) => {
  const backend = useBackend(name);

  const intervals: Array<[string, Partial<TimerSpec>]> = [
    ['a held interval', {}],
    ['a jittered interval', { jitter: 150 }],
    ['a free-running interval (awaitTask false)', { awaitTask: false }],
  ];

  it.concurrent.each(intervals)(
    '%s rescheduled before its startAt runs there, then at its grid slots from startAt on',
    async (_what, policy) => {
      const h = await backend.open();
      const every = 400;
      const startAt = (await h.now()) + 2_500;
      await h.timers.schedule({ key: 'rs', handler: 'work', every, startAt, maxRuns: 3, ...policy });
      const moved = await h.timers.reschedule('rs', { delay: 200 });
      const times = await listed(h, 'rs', 3);
      await h.until(() => h.runs.length === 3, { what: 'three runs', within: 8_000 }); // deadline
      const dues = h.runs.map((run) => run.due);
      // the rescheduled run is where the caller asked; the grid (re-anchored at the reschedule) goes on
      // at its first slot not before startAt
      expect(dues[0]).toBe(moved.dueAt);
      const slots = dues.slice(1).map((due) => slotOf(due, moved.scheduledAt, every));
      expect(slots[0]).toBeGreaterThanOrEqual(startAt);
      expect(slots[0] - startAt).toBeLessThan(every);
      expect(slots[1] - slots[0]).toBe(every);
      expect(times).toEqual(dues);
      // the grid slots between the run and startAt are none of the timer's: nothing skipped
      expect(h.eventsOf('skipped')).toEqual([]);
    },
  );

  const crons: Array<[string, Partial<TimerSpec>]> = [
    ['a held cron', {}],
    ['a jittered cron', { jitter: 300 }],
    ["a free-running cron (overlap 'allow')", { overlap: 'allow' }],
  ];

  it.concurrent.each(crons)(
    '%s rescheduled before its startAt goes on at its first occurrence from startAt',
    async (_what, policy) => {
      const h = await backend.open();
      const startAt = (await h.now()) + 2_500;
      const spec = { key: 'rc', handler: 'work', cron: '* * * * * *', tz: 'UTC', startAt, maxRuns: 2 };
      await h.timers.schedule({ ...spec, ...policy });
      const moved = await h.timers.reschedule('rc', { delay: 200 });
      const times = await listed(h, 'rc', 2);
      await h.until(() => h.runs.length === 2, { what: 'two runs', within: 8_000 }); // deadline
      const dues = h.runs.map((run) => run.due);
      expect(dues[0]).toBe(moved.dueAt);
      // the second's slot (its due less its jitter, under a second) is the first second not before startAt
      expect(slotOf(dues[1], 0, 1000)).toBe(Math.ceil(startAt / 1000) * 1000);
      expect(times).toEqual(dues);
      expect(h.eventsOf('skipped')).toEqual([]);
    },
  );

  it.concurrent('a trigger before startAt runs now and leaves the first slot where it was', async () => {
    const h = await backend.open();
    const startAt = (await h.now()) + 1_500;
    const timer = await h.timers.schedule({ key: 'tg', handler: 'work', every: 300, startAt, maxRuns: 2 });
    await h.timers.trigger('tg');
    await h.until(() => h.runs.length === 2, { what: 'the trigger run and the first slot', within: 6_000 }); // deadline
    expect(h.runs[0].due).toBeLessThan(startAt);
    expect(h.runs[1].due).toBe(timer.dueAt);
    expect(timer.dueAt).toBeGreaterThanOrEqual(startAt);
  });

  it.concurrent(
    'a backfill runs no slot before startAt: a range before it is refused, one across it cut',
    async () => {
      const h = await backend.open();
      const startAt = (await h.now()) - 250;
      const timer = await h.timers.schedule({ key: 'bf', handler: 'work', every: 100, startAt });
      await expect(h.timers.backfill('bf', { from: startAt - 1_000, to: startAt - 1 })).rejects.toMatchObject(
        {
          reason: 'invalid',
          field: 'range',
          fix: expect.stringMatching(/startAt/),
        },
      );
      // the grid reaches back before the timer's creation, but not before its startAt
      const expected: number[] = [];
      for (let slot = timer.scheduledAt - 100; slot >= startAt; slot -= 100) expected.unshift(slot);
      const answer = await h.timers.backfill('bf', { from: startAt - 1_000, to: timer.scheduledAt - 1 });
      expect(answer).toEqual({ slots: expected.length });
      await h.until(() => h.runs.length >= expected.length, { what: 'the backfill runs' });
      expect(h.runs.slice(0, expected.length).map((run) => run.due)).toEqual(expected);
    },
  );
});
