/** SPEC §3.3 on every backend: intervals with awaitTask both ways, maxRuns, cron. */
import { BACKENDS, useBackend } from './backends';

const onGrid = (due: number, anchor: number, every: number) => (due - anchor) % every === 0;

describe.each(BACKENDS)('%s backend: intervals', (name) => {
  const backend = useBackend(name);

  it('fire on their grid, first one interval after creation, pending between runs with a new version', async () => {
    const h = await backend.open();
    const timer = await h.timers.schedule({
      key: 'beat',
      handler: 'work',
      every: 100,
      maxRuns: 3,
      removeOnComplete: false,
    });
    expect(timer.dueAt).toBe(timer.scheduledAt + 100);
    await h.event({ type: 'completed', key: 'beat', version: 1 });
    const between = await h.until(async () => {
      const row = await h.timers.get('beat');
      return row?.status === 'pending' && row;
    });
    expect(between).toMatchObject({ version: 2, runCount: 1, last: { status: 'ok' } });
    expect(onGrid(between.dueAt, timer.scheduledAt, 100)).toBe(true);
    await h.event({ type: 'completed', key: 'beat', version: 3 });
    expect(h.runs.map((run) => [run.version, run.runCount])).toEqual([
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
    for (const run of h.runs) {
      expect(onGrid(run.due, timer.scheduledAt, 100)).toBe(true);
      expect(run.at).toBeGreaterThanOrEqual(run.due);
    }
    expect(await h.timers.get('beat')).toMatchObject({ status: 'completed', runCount: 3 });
  });

  it('awaitTask: true arms the next tick after the run settles, on the grid, so a slow run never overlaps', async () => {
    const h = await backend.open();
    const timer = await h.timers.schedule({
      key: 'slow',
      handler: 'work',
      every: 100,
      maxRuns: 3,
      payload: { sleepMs: 250 },
    });
    await h.event({ type: 'completed', key: 'slow', version: 3 });
    const completions = h.eventsOf('completed');
    for (const [i, run] of h.runs.entries()) {
      expect(onGrid(run.due, timer.scheduledAt, 100)).toBe(true);
      // the next run starts only after this one settled, so it skipped the slots the run covered
      if (i > 0) expect(run.due).toBeGreaterThanOrEqual(completions[i - 1].at);
    }
  });

  it('awaitTask: true ends the interval as failed when a run throws, kept with removeOnComplete: false', async () => {
    const h = await backend.open();
    const timer = await h.timers.schedule({
      key: 'strict',
      handler: 'work',
      every: 100,
      payload: { fail: 'down' },
      removeOnComplete: false,
    });
    expect(await h.event({ type: 'failed', key: 'strict' })).toMatchObject({ error: { message: 'down' } });
    await h.pass(300);
    expect(h.runs).toHaveLength(1);
    expect(await h.timers.get('strict')).toMatchObject({
      status: 'failed',
      runCount: 1,
      last: { status: 'failed', error: { message: 'down' } },
    });
    expect(await h.timers.check(timer.id)).toBe(false);
  });

  it('a failed awaitTask: true interval is removed by default', async () => {
    const h = await backend.open();
    const { id } = await h.timers.schedule({
      key: 'strict',
      handler: 'work',
      every: 100,
      payload: { fail: 'down' },
    });
    await h.event({ type: 'failed', key: 'strict' });
    await h.until(async () => (await h.timers.get('strict')) === null, { what: 'removal' });
    expect(await h.timers.check(id)).toBe(false);
  });

  it('awaitTask:false continues ticking after task failure', async () => {
    const h = await backend.open();
    const timer = await h.timers.schedule({
      key: 'heartbeat',
      handler: 'work',
      every: 100,
      awaitTask: false,
      payload: { fail: 'no reply' },
    });
    await h.until(() => h.eventsOf('failed').length >= 3, { what: 'three failures' });
    const row = await h.timers.get('heartbeat');
    expect(row).toMatchObject({ id: timer.id, status: 'pending', last: { error: { message: 'no reply' } } });
    expect(row!.runCount).toBeGreaterThanOrEqual(3);
    expect(row!.lastErrorAt).not.toBeNull();
  });

  it('awaitTask: false arms the next tick at claim time, so runs overlap and the timer stays pending', async () => {
    const h = await backend.open();
    await h.timers.schedule({
      key: 'ping',
      handler: 'work',
      every: 100,
      awaitTask: false,
      payload: { sleepMs: 450 },
    });
    await h.event({ type: 'running', key: 'ping' });
    const row = await h.until(async () => {
      const timer = await h.timers.get('ping');
      return timer?.version === 2 && timer;
    });
    expect(row).toMatchObject({ status: 'pending', last: { status: 'running' } });
    await h.until(() => h.runs.length >= 3, { what: 'three runs' });
    // the third run started before the first one completed
    expect(h.eventsOf('completed').filter((e) => e.version === 1)).toEqual([]);
    await h.event({ type: 'completed', key: 'ping', version: 1 });
  });

  it('maxRuns with awaitTask: false completes once the last run settles', async () => {
    const h = await backend.open();
    await h.timers.schedule({
      key: 'twice',
      handler: 'work',
      every: 100,
      awaitTask: false,
      maxRuns: 2,
      payload: { sleepMs: 300 },
    });
    await h.until(() => h.runs.length === 2, { what: 'two runs' });
    expect(await h.timers.get('twice')).toMatchObject({ status: 'running', runCount: 2 });
    await h.until(async () => (await h.timers.get('twice')) === null, { what: 'completion' });
    await h.pass(300);
    expect(h.runs).toHaveLength(2);
  });
});

describe.each(BACKENDS)('%s backend: cron', (name) => {
  const backend = useBackend(name);

  it('runs a six-field cron on whole seconds and completes after maxRuns', async () => {
    const h = await backend.open();
    const timer = await h.timers.schedule({
      key: 'c',
      handler: 'work',
      cron: '* * * * * *',
      tz: 'UTC',
      maxRuns: 2,
    });
    expect(timer.dueAt % 1_000).toBe(0);
    expect(timer.dueAt).toBeGreaterThan(timer.scheduledAt);
    await h.until(async () => h.runs.length === 2 && (await h.timers.get('c')) === null, {
      what: 'two runs',
    });
    expect(h.runs.map((run) => run.due % 1_000)).toEqual([0, 0]);
    expect(h.runs[1].due - h.runs[0].due).toBe(1_000);
    expect(h.runs[0].due).toBe(timer.dueAt);
  });

  it('fires on the wall clock of its zone', async () => {
    const h = await backend.open();
    const timer = await h.timers.schedule({
      key: 'digest',
      handler: 'work',
      cron: '0 7 * * *',
      tz: 'America/Toronto',
    });
    const wall = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'America/Toronto',
      hour: '2-digit',
      minute: '2-digit',
      hour12: false,
    });
    expect(wall.format(timer.dueAt)).toBe('07:00');
    expect(timer.dueAt - timer.scheduledAt).toBeLessThanOrEqual(25 * 3_600_000);
    expect(await h.timers.get('digest')).toMatchObject({
      status: 'pending',
      cron: '0 7 * * *',
      tz: 'America/Toronto',
    });
  });

  it('a throwing run lands failed on last and keeps the schedule', async () => {
    const h = await backend.open();
    await h.timers.schedule({
      key: 'c',
      handler: 'work',
      cron: '* * * * * *',
      tz: 'UTC',
      payload: { fail: 'x' },
    });
    const failed = await h.event({ type: 'failed', key: 'c' });
    const row = await h.until(async () => {
      const timer = await h.timers.get('c');
      return timer?.status === 'pending' && timer;
    });
    expect(row).toMatchObject({ version: 2, last: { status: 'failed', error: { message: 'x' } } });
    expect(row.dueAt % 1_000).toBe(0);
    expect(row.dueAt).toBeGreaterThan(h.runs[0].due);
    expect(failed.version).toBe(1);
  });

  it('skips a slot that comes while the previous run is still running (reason overlap)', async () => {
    const h = await backend.open();
    await h.timers.schedule({
      key: 'm',
      handler: 'work',
      cron: '* * * * * *',
      tz: 'UTC',
      payload: { sleepMs: 1_500 },
    });
    const skipped = await h.event({ type: 'skipped', key: 'm' }, { within: 8_000 });
    expect(skipped).toMatchObject({ reason: 'overlap', version: 1 });
    expect(skipped.count).toBeGreaterThanOrEqual(1);
    await h.until(() => h.runs.length === 2, { within: 8_000, what: 'the second run' });
    // the second run is on the first slot after the first one ended, not on a skipped one
    expect(h.runs[1].due).toBeGreaterThanOrEqual(h.runs[0].due + 2_000);
    expect(h.runs[1].due % 1_000).toBe(0);
  });
});
