/**
 * docs/spec.md §3.4 on every backend: reschedule, pause and resume.
 */
import { BACKENDS, useBackend } from './backends';
import { startFireAndForget } from './fire-and-forget';

describe.each(BACKENDS)('%s backend: reschedule', (name) => {
  const backend = useBackend(name);
  const runningFireAndForget = () => startFireAndForget(backend);

  it('keeps the id, bumps the version, moves the due time, emits scheduled and runs only the new version', async () => {
    const h = await backend.open();
    const { id } = await h.timers.schedule({ key: 'k', handler: 'work', delay: 100 });
    const moved = await h.timers.reschedule('k', { delay: 200 });
    expect(moved).toMatchObject({ id, version: 2, status: 'pending' });
    expect(moved.dueAt).toBe(moved.scheduledAt + 200);
    expect(await h.event({ type: 'scheduled', version: 2 })).toMatchObject({ id, due: moved.dueAt });
    await h.event({ type: 'completed', key: 'k' });
    expect(h.runs.map((run) => [run.id, run.version, run.due])).toEqual([[id, 2, moved.dueAt]]);
    expect(h.runs[0].at).toBeGreaterThanOrEqual(moved.dueAt);
  });

  it('accepts an absolute time; an interval then goes on on its grid from the reschedule', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'i', handler: 'work', every: 100, maxRuns: 3 });
    const at = (await h.now()) + 150;
    const moved = await h.timers.reschedule('i', { at });
    expect(moved.dueAt).toBe(at);
    await h.event({ type: 'completed', key: 'i', version: moved.version + 2 });
    expect(h.runs[0].due).toBe(at);
    for (const run of h.runs.slice(1)) expect((run.due - moved.scheduledAt) % 100).toBe(0);
  });

  it('is refused with inactive while the timer runs, and with not-found without a live timer', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'k', handler: 'work', delay: 10, payload: { sleepMs: 1_000 } }); // on the backend's clock: virtual for memory; a real short wait on Redis
    await h.event({ type: 'running', key: 'k' });
    await expect(h.timers.reschedule('k', { delay: '1h' })).rejects.toMatchObject({
      reason: 'inactive',
      field: 'key',
    });
    expect(await h.timers.get('k')).toMatchObject({ version: 1, status: 'running' });
    await expect(h.timers.reschedule('other', { delay: 1 })).rejects.toMatchObject({ reason: 'not-found' });
    await expect(h.timers.reschedule('k', { delay: -1 } as never)).rejects.toMatchObject({
      reason: 'invalid',
    });
  });

  it('aborts the runs of an awaitTask: false interval, which still record their outcome', async () => {
    const h = await runningFireAndForget();
    const moved = await h.timers.reschedule('f', { delay: '1h' });
    await h.until(() => h.runs[0].signal.aborted, { what: 'the abort' });
    await h.event({ type: 'completed', key: 'f', version: 1 });
    expect(await h.timers.get('f')).toMatchObject({
      version: moved.version,
      dueAt: moved.dueAt,
      status: 'pending',
    });
    expect(await h.event({ type: 'scheduled', version: moved.version })).toMatchObject({
      reason: 'reschedule',
      due: moved.dueAt,
    });
  });
});

describe.each(BACKENDS)('%s backend: pause and resume', (name) => {
  const backend = useBackend(name);
  const runningFireAndForget = () => startFireAndForget(backend);

  it('a paused interval does not fire; resume takes it to the next grid slot after now', async () => {
    const h = await backend.open();
    const timer = await h.timers.schedule({ key: 'i', handler: 'work', every: 100 });
    expect(await h.timers.pause('i')).toMatchObject({ status: 'paused', version: 2 });
    await h.pass(250);
    expect(h.runs).toEqual([]);
    const before = await h.now();
    const resumed = await h.timers.resume('i');
    // The backend reads its clock somewhere between these two reads (on Redis, real time passes).
    const after = await h.now();
    expect(resumed).toMatchObject({ status: 'pending', version: 3 });
    expect((resumed.dueAt - timer.scheduledAt) % 100).toBe(0);
    expect(resumed.dueAt).toBeGreaterThan(before);
    expect(resumed.dueAt).toBeLessThanOrEqual(after + 100);
    await h.event({ type: 'completed', key: 'i', version: 3 });
    expect(h.runs[0].due).toBe(resumed.dueAt);
  });

  it('resume runs a one-shot whose time passed while paused at once, and keeps a future one at its time', async () => {
    const h = await backend.open();
    const soon = await h.timers.schedule({ key: 'soon', handler: 'work', delay: 50 });
    const later = await h.timers.schedule({ key: 'later', handler: 'work', delay: '1h' });
    await h.timers.pause('soon');
    await h.timers.pause('later');
    await h.pass(150);
    expect(h.runs).toEqual([]);
    const now = await h.now();
    const resumed = await h.timers.resume('soon');
    expect(resumed.dueAt).toBeGreaterThanOrEqual(now);
    expect(resumed.dueAt).toBeGreaterThan(soon.dueAt);
    expect(await h.timers.resume('later')).toMatchObject({ dueAt: later.dueAt });
    await h.event({ type: 'completed', key: 'soon' });
    expect(h.runs.map((run) => [run.key, run.due])).toEqual([['soon', resumed.dueAt]]);
  });

  it('resume takes a cron to its next occurrence after now', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'c', handler: 'work', cron: '* * * * * *', tz: 'UTC' });
    await h.timers.pause('c');
    await h.pass(1_200);
    const before = await h.now();
    const resumed = await h.timers.resume('c');
    // The backend reads its clock somewhere between these two reads (on Redis, real time passes).
    const after = await h.now();
    expect(resumed.dueAt % 1_000).toBe(0);
    expect(resumed.dueAt).toBeGreaterThan(before);
    expect(resumed.dueAt).toBeLessThanOrEqual(after + 1_000);
    expect((await h.started({ key: 'c' })).due).toBe(resumed.dueAt);
  });

  it('a resume whose next slot is after endAt ends the timer: completed, reason ended, nothing run', async () => {
    const h = await backend.open();
    // the first slot, half a second after the schedule lands, before endAt and after the pause: a second
    // of room for each on a loaded host (with 200 and 300 ms a slow schedule was refused, its first slot
    // after endAt)
    const endAt = (await h.now()) + 1_500;
    await h.timers.schedule({ key: 'i', handler: 'work', every: 500, endAt, removeOnComplete: false });
    await h.timers.pause('i');
    await h.pass(1_700); // virtual clock (real time on Redis): endAt passes while paused
    expect(await h.timers.resume('i')).toMatchObject({ status: 'completed' });
    expect(await h.event({ type: 'completed', key: 'i' })).toMatchObject({ reason: 'ended' });
    await h.pass(600); // no slot after endAt comes
    expect(h.runs).toEqual([]);
    expect(await h.timers.get('i')).toMatchObject({ status: 'completed' });
  });

  it('a resume past endAt after a failed last run ends the timer failed, reason ended', async () => {
    const h = await backend.open();
    const endAt = (await h.now()) + 2_500; // a slot after the first run's, before endAt: it pauses
    const spec = { cron: '* * * * * *', tz: 'UTC', endAt, pauseAfterFailures: 1, payload: { fail: 'down' } };
    await h.timers.schedule({ key: 'f', handler: 'work', ...spec, removeOnComplete: false });
    await h.event({ type: 'failed', key: 'f' });
    await h.until(async () => (await h.timers.get('f'))?.status === 'paused', {
      what: 'paused by its failure',
    });
    await h.pass(Math.max(0, endAt - (await h.now())) + 100); // virtual clock (real time on Redis, ≤ 2.6 s): endAt passes while paused
    expect(await h.timers.resume('f')).toMatchObject({ status: 'failed' });
    expect(await h.event({ type: 'failed', key: 'f', reason: 'ended' })).toBeDefined();
    expect(h.runs).toHaveLength(1);
    expect(await h.timers.get('f')).toMatchObject({ status: 'failed' });
  });

  it('pause and resume are idempotent, and resume emits scheduled with reason resume', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'i', handler: 'work', every: '1h' });
    await h.timers.pause('i');
    expect(await h.timers.pause('i')).toMatchObject({ status: 'paused', version: 2 });
    const resumed = await h.timers.resume('i');
    expect(await h.timers.resume('i')).toMatchObject({ status: 'pending', version: 3 });
    expect(await h.event({ type: 'scheduled', version: 3 })).toMatchObject({
      reason: 'resume',
      due: resumed.dueAt,
    });
  });

  it('pause is refused with inactive while a run holds the timer', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'i', handler: 'work', every: 100, payload: { sleepMs: 1_000 } }); // on the backend's clock: virtual for memory; a real short wait on Redis
    await h.event({ type: 'running', key: 'i' });
    await expect(h.timers.pause('i')).rejects.toMatchObject({ reason: 'inactive' });
    expect(await h.timers.get('i')).toMatchObject({ status: 'running', version: 1 });
  });

  it('pausing an awaitTask: false interval aborts its runs in flight; they still record their outcome', async () => {
    const h = await runningFireAndForget();
    expect(await h.timers.pause('f')).toMatchObject({ status: 'paused' });
    await h.until(() => h.runs.every((run) => run.signal.aborted), { what: 'the aborts' });
    await h.until(() => h.eventsOf('completed').length === h.runs.length, { what: 'the outcomes' });
    await h.pass(300);
    expect(await h.timers.get('f')).toMatchObject({ status: 'paused', last: { status: 'ok' } });
  });

  it('a finished row is not live: pause, resume, trigger and reschedule answer not-found', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'done', handler: 'work', delay: 1, removeOnComplete: false });
    await h.event({ type: 'completed', key: 'done' });
    await expect(h.timers.pause('done')).rejects.toMatchObject({ reason: 'not-found' });
    await expect(h.timers.resume('done')).rejects.toMatchObject({ reason: 'not-found' });
    await expect(h.timers.trigger('done')).rejects.toMatchObject({ reason: 'not-found' });
    await expect(h.timers.reschedule('done', { delay: 1 })).rejects.toMatchObject({ reason: 'not-found' });
    await expect(h.timers.pause('nope')).rejects.toMatchObject({ reason: 'not-found' });
  });

  // docs/spec.md §2: the fix says where the key's timers are listed, and that a listed one may have
  // ended (list() shows the finished rows removeOnComplete: false keeps, not only the live ones).
  it('not-found’s fix names the list call for the key’s scope, and says a kept row there has ended', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'jobs:done', handler: 'work', delay: 1, removeOnComplete: false });
    await h.event({ type: 'completed', key: 'jobs:done' });
    const refusal = { reason: 'not-found', field: 'key' };
    // a key of the scope with no row (jobs:done itself is refused naming its status: ended-refusals.test.ts)
    await expect(h.timers.pause('jobs:gone')).rejects.toMatchObject({
      ...refusal,
      fix: expect.stringMatching(
        /^Check the key; list\(\{ prefix: "jobs:" \}\) lists the timers under it\. One listed as completed or failed has ended .*schedule it again to run it\. One removed when it ended \(a one-shot after its run, by default\) keeps its history for 7 days: history\("jobs:gone"\)\.$/,
      ),
    });
    expect((await h.timers.list({ prefix: 'jobs:' })).items).toMatchObject([
      { key: 'jobs:done', status: 'completed' },
    ]);
    await expect(h.timers.trigger('plain')).rejects.toMatchObject({
      ...refusal,
      fix: expect.stringMatching(/^Check the key; list\(\) lists the timers/),
    });
  });
});
