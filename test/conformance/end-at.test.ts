/**
 * docs/spec.md §3.3c on every backend: `endAt` bounds every slot a timer runs, a backfill's too — a timer
 * can outlive its endAt pending (its run moved past it by a reschedule, a retry, a late wake), and a
 * backfill then runs none of its grid slots after endAt.
 */
import type { TimerSpec } from '@sundial/core';
import { BACKENDS, useBackend } from './backends';

const HOUR = 3_600_000;

describe.each(BACKENDS)('%s backend: backfill and endAt', (name) => {
  const backend = useBackend(name);

  it('runs no slot after endAt, and refuses a range that starts after it', async () => {
    const h = await backend.open();
    // the first slot (200 ms after the schedule lands) before endAt with room for a loaded host
    const endAt = (await h.now()) + 1_000;
    await h.timers.schedule({ key: 'i', handler: 'work', every: 200, endAt, removeOnComplete: false });
    // its run moved past endAt: the timer stays pending after endAt, its grid anchored at the reschedule
    const moved = await h.timers.reschedule('i', { at: endAt + 3_600_000 });
    await h.pass(1_400); // virtual clock (real time on Redis): endAt passes, the grid has slots on both sides of it
    const to = await h.now();
    const slots: number[] = [];
    for (let slot = moved.scheduledAt; slot <= endAt; slot += 200) slots.push(slot);
    expect(await h.timers.backfill('i', { from: moved.scheduledAt, to })).toEqual({ slots: slots.length });
    await h.until(() => h.runs.length === slots.length, { what: 'the backfill runs' });
    await h.until(async () => (await h.timers.get('i'))?.status === 'pending', { what: 'the backfill end' });
    expect(h.runs.map((run) => run.due)).toEqual(slots);
    await expect(h.timers.backfill('i', { from: endAt + 1, to })).rejects.toMatchObject({
      reason: 'invalid',
      field: 'range',
    });
    expect(await h.timers.get('i')).toMatchObject({ status: 'pending', dueAt: moved.dueAt });
  });
});

describe.each(BACKENDS)("%s backend: catchup 'skip' at endAt", (name) => {
  const backend = useBackend(name);

  it('a slot found late whose successor is after endAt runs: it is the last, no later one came', async () => {
    const h = await backend.open();
    const endAt = (await h.now()) + 1.5 * HOUR; // one slot, at 1h; the 2h one is after endAt
    const spec: TimerSpec = { key: 's', handler: 'work', every: '1h', catchup: 'skip', endAt };
    await h.timers.schedule({ ...spec, removeOnComplete: false });
    await h.downFor(2.5 * HOUR);
    expect(await h.event({ type: 'completed', key: 's' })).toMatchObject({ reason: 'ended' });
    // its first slot, up to half an hour before endAt (on Redis, downFor moved both back by the outage)
    const row = await h.timers.get('s');
    expect(h.runs).toHaveLength(1);
    expect(row!.endAt! - h.runs[0].due).toBeGreaterThan(0);
    expect(row!.endAt! - h.runs[0].due).toBeLessThanOrEqual(HOUR / 2);
    expect(h.eventsOf('skipped')).toEqual([]);
  });
});
