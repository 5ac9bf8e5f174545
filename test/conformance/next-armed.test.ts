/**
 * docs/spec.md §3.9 on every backend: `next` lists the runs that will in fact come when the armed due is
 * not a plain slot — a retry of a slot (§3.3b: it takes no run of maxRuns) and a backfill in progress
 * (§3.3c: its other slots first, then the slot the schedule goes back to) — as they then run.
 */
import type { TimerContext } from '@sundial/core';
import { BACKENDS, useBackend } from './backends';

const HOUR = 3_600_000;
const at = (ms: number) => new Date(ms).toISOString();

describe.each(BACKENDS)('%s backend: next of a retry or a backfill', (name) => {
  const backend = useBackend(name);

  it('lists a pending retry, which takes no run of maxRuns, and the slots after it', async () => {
    const h = await backend.open();
    const retry = { attempts: 2, backoff: { type: 'fixed', delay: HOUR } } as const;
    const failing = { handler: 'work', every: 300, payload: { fail: 'no' }, retry };
    // the first slot's run fails: its retry is armed an hour on, runCount 1
    await h.timers.schedule({ key: 'last', ...failing, maxRuns: 1 });
    await h.timers.schedule({ key: 'two', ...failing, maxRuns: 2 });
    const retried = (key: string) =>
      h.until(
        async () => {
          const timer = await h.timers.get(key);
          return timer?.status === 'pending' && timer.runCount === 1 && timer;
        },
        { what: `the retry of ${key} armed` },
      );
    // the last run maxRuns allows still has its retry to come
    const last = await retried('last');
    expect((await h.timers.next('last')).map((time) => time.at)).toEqual([at(last.dueAt)]);
    // the retry, then the one run left: the grid slot after it
    const two = await retried('two');
    const slotAfter = two.scheduledAt + (Math.floor((two.dueAt - two.scheduledAt) / 300) + 1) * 300;
    expect((await h.timers.next('two')).map((time) => time.at)).toEqual([at(two.dueAt), at(slotAfter)]);
    expect((await h.timers.describe('two')).next).toEqual(await h.timers.next('two'));
  });

  it('lists a backfill’s slots still to run, then the slot it goes back to, as they then run', async () => {
    let open = (): void => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const dues: number[] = [];
    const hold = async (_payload: unknown, ctx: TimerContext) => {
      dues.push(ctx.due);
      await Promise.race([gate, new Promise((resolve) => ctx.signal.addEventListener('abort', resolve))]);
    };
    const h = await backend.open({ handlers: { hold } });
    const timer = await h.timers.schedule({ key: 'b', handler: 'hold', every: '1h' });
    const anchor = timer.scheduledAt;
    const range = { from: anchor - 3 * HOUR, to: anchor - HOUR };
    expect(await h.timers.backfill('b', range)).toEqual({ slots: 3 });
    // the first backfill slot's run holds the timer: two backfill slots, then the schedule
    await h.until(() => dues.length === 1, { what: 'the first backfill slot running' });
    const next = await h.timers.next('b', { count: 4 });
    const expected = [anchor - 2 * HOUR, anchor - HOUR, anchor + HOUR, anchor + 2 * HOUR];
    expect(next.map((time) => time.at)).toEqual(expected.map(at));
    // what runs: the two backfill slots, then (an hour after creation) the armed slot
    open();
    await h.until(() => dues.length === 3, { what: 'the backfill slots run' });
    expect(dues).toEqual([anchor - 3 * HOUR, ...expected.slice(0, 2)]);
    await h.until(async () => (await h.timers.get('b'))?.status === 'pending', { what: 'the backfill done' });
    expect((await h.timers.next('b', { count: 1 })).map((time) => time.at)).toEqual([at(anchor + HOUR)]);
  });
});
