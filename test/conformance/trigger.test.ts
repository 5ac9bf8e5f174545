/**
 * docs/spec.md §3.4 on every backend: trigger.
 */
import { BACKENDS, useBackend } from './backends';

describe.each(BACKENDS)('%s backend: trigger', (name) => {
  const backend = useBackend(name);

  it('runs an interval now, out of band, without moving its schedule', async () => {
    const h = await backend.open();
    const timer = await h.timers.schedule({ key: 'i', handler: 'work', every: '1h' });
    const running = await h.timers.trigger('i');
    expect(running).toMatchObject({ dueAt: timer.dueAt, version: 2 });
    expect(await h.event({ type: 'scheduled', version: 2 })).toMatchObject({ reason: 'trigger' });
    await h.event({ type: 'completed', key: 'i' });
    expect(h.runs.map((run) => run.version)).toEqual([2]);
    expect(await h.timers.get('i')).toMatchObject({
      status: 'pending',
      dueAt: timer.dueAt,
      runCount: 1,
      version: 3,
    });
  });

  it('answers the row as the trigger left it: pending, version + 1, before its run starts (§3.4)', async () => {
    const h = await backend.open();
    const timer = await h.timers.schedule({ key: 'a', handler: 'work', every: '1h' });
    const answer = await h.timers.trigger('a');
    expect(answer).toMatchObject({ status: 'pending', runCount: 0, version: 2, dueAt: timer.dueAt });
    expect(answer.lastFiredAt).toBeNull();
    const run = await h.started({ key: 'a' });
    expect(run.version).toBe(2);
  });

  it('next while a run goes on: every run maxRuns leaves, the armed due first when a trigger runs', async () => {
    const h = await backend.open();
    const hourly = { handler: 'work', every: '1h', maxRuns: 3, payload: { sleepMs: 2_000 } } as const; // on the backend's clock
    const timer = await h.timers.schedule({ key: 't', ...hourly });
    await h.timers.trigger('t');
    await h.started({ key: 't' });
    // the trigger run is the first of 3: the armed due and the slot after it are still to come
    const afterTrigger = await h.timers.next('t');
    expect(afterTrigger.map((time) => Date.parse(time.at) - timer.dueAt)).toEqual([0, 3_600_000]);
    await h.timers.schedule({ key: 's', ...hourly, every: 300, maxRuns: 4 });
    const run = await h.started({ key: 's' });
    // its own slot's run is the first of 4: three slots after it — the grid's after now, the ones it
    // went past meanwhile being skipped (however long the read took on a loaded host)
    const after = (await h.timers.next('s')).map((time) => Date.parse(time.at) - run.due);
    expect(after).toHaveLength(3);
    expect(after[0] % 300).toBe(0);
    expect(after).toEqual([after[0], after[0] + 300, after[0] + 600]);
    expect(after[0]).toBeGreaterThan(0);
  });

  it('runs a one-shot early and still runs it at its time', async () => {
    const h = await backend.open();
    const timer = await h.timers.schedule({ key: 'o', handler: 'work', delay: 300 });
    await h.timers.trigger('o');
    await h.until(() => h.eventsOf('completed').length === 2, { what: 'the run at its time' });
    expect(h.runs.map((run) => run.due)[1]).toBe(timer.dueAt);
    // The run at its time claimed the row the triggered run left: settled, due unmoved.
    expect(h.runs[1].timer).toMatchObject({ runCount: 2, dueAt: timer.dueAt });
    expect(h.runs[1].timer.lastCompletedAt).toBeGreaterThanOrEqual(h.runs[0].at);
    expect(await h.timers.get('o')).toBeNull();
  });

  it('a one-shot due while its triggered run holds it runs right after that run', async () => {
    const h = await backend.open();
    const timer = await h.timers.schedule({
      key: 'o',
      handler: 'work',
      delay: 100,
      payload: { sleepMs: 400 },
    });
    await h.timers.trigger('o');
    await h.until(() => h.eventsOf('completed').length === 2, { what: 'both runs' });
    expect(h.runs.map((run) => run.due)[1]).toBe(timer.dueAt);
    expect(h.runs[1].at).toBeGreaterThanOrEqual(h.runs[0].at + 400);
  });

  it('a triggered run that throws does not end an awaitTask interval', async () => {
    const h = await backend.open({
      handlers: {
        flaky: (_payload, ctx) => {
          if (ctx.runCount === 1) throw new Error('first');
        },
      },
    });
    await h.timers.schedule({ key: 'i', handler: 'flaky', every: 100, maxRuns: 3, removeOnComplete: false });
    await h.timers.trigger('i');
    await h.event({ type: 'failed', key: 'i' });
    await h.until(async () => (await h.timers.get('i'))?.status === 'completed', { what: 'three runs' });
    expect(await h.timers.get('i')).toMatchObject({ runCount: 3, last: { status: 'ok' } });
  });

  it('is refused while paused and while the timer runs, naming the status it met', async () => {
    const [h, met] = [await backend.open(), (status: string) => ({ reason: 'inactive', detail: { status } })];
    await h.timers.schedule({ key: 'p', handler: 'work', every: '1h' });
    await h.timers.pause('p');
    await expect(h.timers.trigger('p')).rejects.toMatchObject(met('paused'));
    await h.timers.schedule({ key: 'r', handler: 'work', every: 100, payload: { sleepMs: 1_000 } }); // on the backend's clock: virtual for memory; a real short wait on Redis
    await h.event({ type: 'running', key: 'r' });
    await expect(h.timers.trigger('r')).rejects.toMatchObject(met('running'));
  });

  it('counts toward maxRuns', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'i', handler: 'work', every: 100, maxRuns: 1 });
    await h.timers.trigger('i');
    await h.event({ type: 'completed', key: 'i' });
    await h.pass(300);
    expect(h.runs).toHaveLength(1);
    expect(await h.timers.get('i')).toBeNull();
  });
});
