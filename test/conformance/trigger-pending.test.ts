/**
 * docs/spec.md §3.4 on every backend: a trigger's run, once answered, runs. The writes that act on a timer
 * that is not running — reschedule, pause, trigger, backfill — are refused `inactive` from the trigger on,
 * as while its run goes on: on the engine the run starts at the trigger; on Redis it waits for a worker's
 * claim, and these writes dropped it unrecorded (reschedule, pause, backfill) or folded a second trigger
 * into the first (one run for two answers).
 */
import type { TimersBackend } from '@sundial/core';
import { BACKENDS, useBackend } from './backends';

const HOUR = 3_600_000;

const WRITES: Array<[string, (timers: TimersBackend, now: number) => Promise<unknown>]> = [
  ['reschedule', (timers) => timers.reschedule('t', { delay: HOUR })],
  ['pause', (timers) => timers.pause('t')],
  ['trigger', (timers) => timers.trigger('t')],
  ['backfill', (timers, now) => timers.backfill('t', { from: now - 5 * HOUR, to: now - 4 * HOUR - 1 })],
];

describe.each(BACKENDS)('%s backend: a write between a trigger and its run', (name) => {
  const backend = useBackend(name);

  it.each(WRITES)('%s is refused inactive, and the trigger run runs', async (_write, write) => {
    const h = await backend.open();
    // a run long enough to go on at the write on the engine (its clock stands still meanwhile)
    await h.timers.schedule({ key: 't', handler: 'work', every: '1h', payload: { sleepMs: 50 } });
    const triggered = await h.held(async () => {
      const answer = await h.timers.trigger('t');
      await expect(write(h.timers, await h.now())).rejects.toMatchObject({
        reason: 'inactive',
        detail: { status: 'running' },
      });
      return answer;
    });
    await h.event({ type: 'completed', key: 't' });
    expect(h.runs.map((run) => run.version)).toEqual([triggered.version]);
  });
});
