/**
 * docs/spec.md §3.3 on every backend: intervals with awaitTask both ways, maxRuns, cron.
 * The tests of a block run side by side (`it.concurrent`): each opens its own timers, dispatcher and
 * runner (Redis: on a prefix of its own) and waits on the backend's time.
 */
import type { Timer, TimerContext, TimerHandler } from '@sundial/core';
import { BACKENDS, useBackend } from './backends';

const onGrid = (due: number, anchor: number, every: number) => (due - anchor) % every === 0;

describe.each(BACKENDS)('%s backend: intervals', (name) => {
  const backend = useBackend(name);

  it.concurrent(
    'fire on their grid, first one interval after creation, pending between runs with a new version',
    async () => {
      const h = await backend.open();
      const timer = await h.timers.schedule({
        key: 'beat',
        handler: 'work',
        every: 100,
        maxRuns: 3,
        removeOnComplete: false,
      });
      expect(timer.dueAt).toBe(timer.scheduledAt + 100);
      // Every state of the row the probe catches on the way; which ones it catches depends on timing.
      const seen: Timer[] = [];
      await h.until(
        async () => {
          const row = await h.timers.get('beat');
          if (row) seen.push(row);
          return row?.status === 'completed';
        },
        { what: 'three runs' },
      );
      await h.event({ type: 'completed', key: 'beat', version: 3 });
      expect(h.runs.map((run) => [run.version, run.runCount])).toEqual([
        [1, 1],
        [2, 2],
        [3, 3],
      ]);
      // What each run claimed (ctx.timer, the row after the claim) holds whatever the timing: a new
      // version per run, due on the grid, armed only after the previous run settled.
      for (const [i, run] of h.runs.entries()) {
        expect(onGrid(run.due, timer.scheduledAt, 100)).toBe(true);
        expect(run.at).toBeGreaterThanOrEqual(run.due);
        expect(run.timer).toMatchObject({
          status: 'running',
          version: i + 1,
          runCount: i + 1,
          dueAt: run.due,
        });
        if (i > 0) {
          expect(run.timer.lastCompletedAt).toBeGreaterThanOrEqual(h.runs[i - 1].at);
          expect(run.due).toBeGreaterThan(run.timer.lastCompletedAt!);
        }
      }
      expect(h.eventsOf('completed').map((event) => event.version)).toEqual([1, 2, 3]);
      // Between runs (any the probe caught) the row is pending under the next version, due on the grid
      // after the run that settled, with that run's outcome as last.
      for (const row of seen.filter((row) => row.status === 'pending' && row.runCount > 0)) {
        expect(row).toMatchObject({ version: row.runCount + 1, last: { status: 'ok' } });
        expect(onGrid(row.dueAt, timer.scheduledAt, 100)).toBe(true);
        expect(row.dueAt).toBeGreaterThan(row.lastCompletedAt!);
      }
      expect(seen.slice(0, -1).filter((row) => row.status !== 'pending' && row.status !== 'running')).toEqual(
        [],
      );
      expect(seen.at(-1)).toMatchObject({ status: 'completed', runCount: 3, last: { status: 'ok' } });
    },
  );

  it.concurrent(
    'awaitTask: true arms the next tick after the run settles, on the grid, so a slow run never overlaps',
    async () => {
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
    },
  );

  it.concurrent(
    'awaitTask: true ends the interval as failed when a run throws, kept with removeOnComplete: false',
    async () => {
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
    },
  );

  it.concurrent('a failed awaitTask: true interval is removed by default', async () => {
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

  it.concurrent('awaitTask:false continues ticking after task failure', async () => {
    const h = await backend.open();
    const timer = await h.timers.schedule({
      key: 'heartbeat',
      handler: 'work',
      every: 100,
      awaitTask: false,
      payload: { fail: 'no reply' },
    });
    await h.until(() => h.eventsOf('failed').length >= 3, { what: 'three failures' });
    // Read between runs: a run in progress shows as last, so wait for a moment with the failure there.
    const row = await h.until(async () => {
      const read = await h.timers.get('heartbeat');
      return read?.last?.status === 'failed' && read;
    });
    expect(row).toMatchObject({ id: timer.id, status: 'pending', last: { error: { message: 'no reply' } } });
    expect(row.runCount).toBeGreaterThanOrEqual(3);
    expect(row.lastErrorAt).not.toBeNull();
  });

  it.concurrent('awaitTask:false goes on after a backfill slot’s run fails (a held run, §3.3)', async () => {
    const h = await backend.open();
    const now = await h.now();
    const failing = {
      every: '1d',
      awaitTask: false,
      payload: { fail: 'no' },
      removeOnComplete: false,
    } as const;
    const timer = await h.timers.schedule({ key: 'filled', handler: 'work', ...failing });
    expect(await h.timers.backfill('filled', { from: now - 25 * 3_600_000, to: now - 3_600_000 })).toEqual({
      slots: 1,
    });
    await h.event({ type: 'failed', key: 'filled' });
    const row = await h.until(async () => {
      const read = await h.timers.get('filled');
      return read?.status !== 'running' && read;
    });
    expect(row).toMatchObject({ id: timer.id, status: 'pending', runCount: 1, last: { status: 'failed' } });
    expect(await h.timers.check(timer.id)).toBe(true);
  });

  it.concurrent(
    'awaitTask: false arms the next tick at claim time, so runs overlap and the timer stays pending',
    async () => {
      // Every run is held until three have started: with the next tick armed only when a run settles, the
      // second would never start (no real-time margin decides it).
      const started: TimerContext[] = [];
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      const held: TimerHandler = async (_payload, ctx) => {
        started.push(ctx);
        await gate;
      };
      const h = await backend.open({ handlers: { held } });
      try {
        await h.timers.schedule({ key: 'ping', handler: 'held', every: 100, awaitTask: false });
        await h.until(() => started.length >= 3, { what: 'three runs, none let go' });
        // Each claim (ctx.timer is the row after it) left the row pending under the next version, due on
        // the first grid slot after the claim, while the run went on.
        for (const { version, timer } of started.slice(0, 3)) {
          const claimedAt = timer.lastFiredAt!;
          expect(timer).toMatchObject({
            status: 'pending',
            version: version + 1,
            last: { status: 'running' },
          });
          expect(onGrid(timer.dueAt, timer.scheduledAt, 100)).toBe(true);
          expect(timer.dueAt).toBeGreaterThan(claimedAt);
          expect(timer.dueAt - 100).toBeLessThanOrEqual(claimedAt);
        }
        expect(started.slice(0, 3).map(({ version }) => version)).toEqual([1, 2, 3]);
        expect(h.eventsOf('completed')).toEqual([]);
      } finally {
        release();
      }
      await h.event({ type: 'completed', key: 'ping', version: 1 });
    },
  );

  it.concurrent('maxRuns with awaitTask: false completes once the last run settles', async () => {
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
    // The last run is held (ctx.timer is the row after its claim): no tick is armed after it.
    expect(h.runs[1].timer).toMatchObject({ status: 'running', version: 2, runCount: 2 });
    await h.until(async () => (await h.timers.get('twice')) === null, { what: 'completion' });
    await h.pass(300);
    expect(h.runs).toHaveLength(2);
  });
});

describe.each(BACKENDS)('%s backend: cron', (name) => {
  const backend = useBackend(name);

  it.concurrent('runs a six-field cron on whole seconds and completes after maxRuns', async () => {
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

  it.concurrent('fires on the wall clock of its zone', async () => {
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

  it.concurrent('a throwing run lands failed on last and keeps the schedule', async () => {
    const h = await backend.open();
    await h.timers.schedule({
      key: 'c',
      handler: 'work',
      cron: '* * * * * *',
      tz: 'UTC',
      payload: { fail: 'x' },
    });
    const failed = await h.event({ type: 'failed', key: 'c' });
    expect(failed).toMatchObject({ version: 1, error: { message: 'x' } });
    // Between runs (whichever gap the probe catches) the row is pending with the failure as last.
    const row = await h.until(async () => {
      const timer = await h.timers.get('c');
      return timer?.status === 'pending' && timer.runCount > 0 && timer;
    });
    expect(row).toMatchObject({
      version: row.runCount + 1,
      last: { status: 'failed', error: { message: 'x' } },
    });
    expect(row.dueAt % 1_000).toBe(0);
    expect(row.dueAt).toBeGreaterThan(row.lastErrorAt!);
    // The next run claimed the row its failed run left: a new version on a later whole second.
    await h.until(() => h.runs.length >= 2, { what: 'the second run' });
    expect(h.runs[1].timer).toMatchObject({ version: 2, runCount: 2 });
    expect(h.runs[1].due % 1_000).toBe(0);
    expect(h.runs[1].due).toBeGreaterThan(h.runs[0].due);
    expect(h.runs[1].timer.lastErrorAt).toBeGreaterThanOrEqual(h.runs[0].at);
  });

  it.concurrent(
    'skips a slot that comes while the previous run is still running (reason overlap)',
    async () => {
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
    },
  );
});
