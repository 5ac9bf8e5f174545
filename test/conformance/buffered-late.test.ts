/**
 * docs/spec.md §3.3a/§3.3c on every backend: the slot overlap 'buffer-one' keeps runs right after the run
 * it came during — a catch-up policy (`catchup: 'skip'`, a `catchupWindow`) does not pass it as late.
 */
import { BACKENDS, useBackend } from './backends';

describe.each(BACKENDS)("%s backend: buffer-one with catchup 'skip'", (name) => {
  const backend = useBackend(name);

  it('runs the kept slot right after the run, late', async () => {
    const h = await backend.open();
    const spec = { handler: 'work', every: 300, payload: { sleepMs: 700 } } as const;
    await h.timers.schedule({ key: 'i', ...spec, maxRuns: 2, overlap: 'buffer-one', catchup: 'skip' });
    await h.until(async () => (await h.timers.get('i')) === null, { what: 'two runs' });
    const [first, second] = h.runs;
    // the slot after the first run's came during it (its successor too): kept, and run late
    expect(second.due).toBe(first.due + 300);
    expect(second.at).toBeGreaterThanOrEqual(first.at + 700);
    const skipped = await h.eventsOnceCome('skipped', 1);
    expect(skipped.map((event) => event.reason)).toEqual(['overlap']);
  });
});

describe.each(BACKENDS)("%s backend: a backfill while buffer-one's kept slot waits", (name) => {
  const backend = useBackend(name);

  it('goes back to the kept slot, still not passed as late', async () => {
    const h = await backend.open();
    const spec = { handler: 'work', every: 300, payload: { sleepMs: 700 } } as const;
    await h.timers.schedule({ key: 'i', ...spec, maxRuns: 3, overlap: 'buffer-one', catchup: 'skip' });
    await h.event({ type: 'running', key: 'i' });
    // the kept slot is armed as the run ends: the backfill comes before it is handed to a worker
    await h.held(async () => {
      await h.event({ type: 'completed', key: 'i' });
      const from = (await h.now()) - 3_000;
      expect(await h.timers.backfill('i', { from, to: from + 299 })).toEqual({ slots: 1 });
    });
    await h.until(async () => (await h.timers.get('i')) === null, { what: 'three runs' });
    const [first, backfilled, kept] = h.runs;
    expect(backfilled.due).toBeLessThan(first.due);
    expect(kept.due).toBe(first.due + 300);
  });
});
