/**
 * docs/spec.md §3.3a and §3.3b on every backend: what a cron does with the slots that come while a run outlasts
 * them (overlap), how a failed run is tried again (retry), and pauseAfterFailures.
 *
 * The tests of a block run side by side (`it.concurrent`): each opens its own timers, dispatcher and runner
 * (Redis: on a prefix of its own) and spends its time waiting for whole seconds and backoffs to pass.
 */
import { BACKENDS, useBackend } from './backends';

/** A cron on every whole second whose run takes 2.5 s: two slots come while it goes on. */
const SLOW_CRON = { handler: 'work', cron: '* * * * * *', tz: 'UTC', payload: { sleepMs: 2_500 } } as const;
const WITHIN = { within: 12_000 };
/** A cron on every whole second whose runs all throw. */
const FAILING_CRON = { handler: 'work', cron: '* * * * * *', tz: 'UTC', payload: { fail: 'nope' } } as const;

describe.each(BACKENDS)('%s backend: overlap', (name) => {
  const backend = useBackend(name);

  it.concurrent("'skip' (the default) skips the slots that come during the run and counts them", async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'c', ...SLOW_CRON, maxRuns: 2 });
    await h.until(async () => (await h.timers.get('c')) === null, { ...WITHIN, what: 'two runs' });
    const [first, second] = h.runs;
    expect(h.runs).toHaveLength(2);
    // The next run is on the first slot after the first one ended: the slots between are skipped.
    const gone = (second.due - first.due) / 1_000 - 1;
    expect(gone).toBeGreaterThanOrEqual(2);
    expect(second.at).toBeGreaterThanOrEqual(first.at + 2_500);
    expect(await h.eventsOnceCome('skipped', 1)).toEqual([
      expect.objectContaining({ version: 1, reason: 'overlap', count: gone }),
    ]);
  });

  it.concurrent(
    "'buffer-one' keeps the first slot that came during the run and runs it right after, with its own due",
    async () => {
      const h = await backend.open();
      const timer = await h.timers.schedule({ key: 'c', ...SLOW_CRON, maxRuns: 2, overlap: 'buffer-one' });
      expect(timer.overlap).toBe('buffer-one');
      await h.until(async () => (await h.timers.get('c')) === null, { ...WITHIN, what: 'two runs' });
      const [first, second] = h.runs;
      expect(h.runs).toHaveLength(2);
      expect(second.due).toBe(first.due + 1_000);
      expect(second.at).toBeGreaterThanOrEqual(first.at + 2_500);
      expect(second).toMatchObject({ runCount: 2, version: 2 });
      // The slot after the buffered one came during the run too: it is skipped.
      const [skipped] = await h.eventsOnceCome('skipped', 1);
      expect(skipped).toMatchObject({ version: 1, reason: 'overlap' });
      expect(skipped.count).toBeGreaterThanOrEqual(1);
      // Redis: the events come over pub/sub, maybe after the row is gone
      expect((await h.eventsOnceCome('completed', 2)).map((event) => event.version)).toEqual([1, 2]);
    },
  );

  it.concurrent(
    "'allow' runs every slot beside the ones still going, each under its own version",
    async () => {
      const h = await backend.open();
      const timer = await h.timers.schedule({ key: 'c', ...SLOW_CRON, maxRuns: 3, overlap: 'allow' });
      expect(timer).toMatchObject({ overlap: 'allow', awaitTask: false });
      await h.until(async () => (await h.timers.get('c')) === null && h.eventsOf('completed').length === 3, {
        ...WITHIN,
        what: 'three runs',
      });
      expect(h.runs.map((run) => [run.version, run.runCount, run.due - h.runs[0].due])).toEqual([
        [1, 1, 0],
        [2, 2, 1_000],
        [3, 3, 2_000],
      ]);
      // each run started while the one before it still ran: before that run's completed event (2.5 s
      // after its start), not a fixed time after the first run's start, which a late runner passes
      const endOf = (version: number) =>
        h.eventsOf('completed').find((event) => event.version === version)!.at;
      expect(h.runs[1].at).toBeLessThan(endOf(1));
      expect(h.runs[2].at).toBeLessThan(endOf(2));
      expect(
        h
          .eventsOf('completed')
          .map((event) => event.version)
          .sort(),
      ).toEqual([1, 2, 3]);
      expect(h.eventsOf('skipped')).toEqual([]);
      expect(h.runs.some((run) => run.signal.aborted)).toBe(false);
    },
  );

  it.concurrent(
    "'cancel-other' aborts the running run's signal when the next slot starts; its completion is stale",
    async () => {
      const h = await backend.open();
      await h.timers.schedule({ key: 'c', ...SLOW_CRON, maxRuns: 3, overlap: 'cancel-other' });
      await h.until(async () => (await h.timers.get('c')) === null, { ...WITHIN, what: 'three runs' });
      await h.until(() => h.eventsOf('stale').length === 2, { what: 'two stale completions' });
      expect(h.runs.map((run) => [run.version, run.due - h.runs[0].due])).toEqual([
        [1, 0],
        [2, 1_000],
        [3, 2_000],
      ]);
      expect(h.runs.map((run) => run.signal.aborted)).toEqual([true, true, false]);
      expect(h.eventsOf('stale').map((event) => [event.version, event.reason])).toEqual([
        [1, 'overlap'],
        [2, 'overlap'],
      ]);
      // v3's completed event comes with the row's removal, after the stale ones (Redis: maybe after the read)
      expect((await h.eventsOnceCome('completed', 1)).map((event) => event.version)).toEqual([3]);
      expect(h.eventsOf('skipped')).toEqual([]);
    },
  );
});

describe.each(BACKENDS)('%s backend: overlap on intervals', (name) => {
  const backend = useBackend(name);
  const SLOW_INTERVAL = { handler: 'work', every: 300, payload: { sleepMs: 700 } } as const;

  it.concurrent("'buffer-one' runs the first grid slot that came during the run right after it", async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'i', ...SLOW_INTERVAL, maxRuns: 2, overlap: 'buffer-one' });
    await h.until(async () => (await h.timers.get('i')) === null, { what: 'two runs' });
    const [first, second] = h.runs;
    expect(second.due).toBe(first.due + 300);
    expect(second.at).toBeGreaterThanOrEqual(first.at + 700);
    const [skipped] = await h.eventsOnceCome('skipped', 1);
    expect(skipped).toMatchObject({ version: 1, reason: 'overlap' });
    expect(skipped.count).toBeGreaterThanOrEqual(1);
  });

  it.concurrent("'cancel-other' aborts the tick still going when the next one starts", async () => {
    const h = await backend.open();
    const timer = await h.timers.schedule({
      key: 'i',
      ...SLOW_INTERVAL,
      maxRuns: 3,
      overlap: 'cancel-other',
    });
    expect(timer).toMatchObject({ overlap: 'cancel-other', awaitTask: false });
    await h.until(async () => (await h.timers.get('i')) === null, { what: 'three runs' });
    await h.until(() => h.eventsOf('stale').length === 2, { what: 'two stale completions' });
    expect(h.runs.map((run) => run.due - h.runs[0].due)).toEqual([0, 300, 600]);
    expect(h.runs.map((run) => run.signal.aborted)).toEqual([true, true, false]);
    expect(h.eventsOf('stale').map((event) => [event.version, event.reason])).toEqual([
      [1, 'overlap'],
      [2, 'overlap'],
    ]);
  });
});

describe.each(BACKENDS)('%s backend: retry', (name) => {
  const backend = useBackend(name);

  it.concurrent(
    'tries a failed run again after an exponential backoff capped at maxDelay, and stops after attempts',
    async () => {
      const h = await backend.open();
      await h.timers.schedule({
        key: 'r',
        handler: 'work',
        delay: 100,
        payload: { fail: 'down' },
        removeOnComplete: false,
        retry: { attempts: 4, backoff: { type: 'exponential', delay: 200, maxDelay: 300 } },
      });
      const row = await h.until(
        async () => {
          const timer = await h.timers.get('r');
          return timer?.status === 'failed' && timer;
        },
        { what: 'the last attempt' },
      );
      expect(row).toMatchObject({
        runCount: 1,
        retry: { attempts: 4, backoff: { type: 'exponential', delay: 200, maxDelay: 300 } },
        last: { status: 'failed', error: { message: 'down' } },
      });
      // The row is read back before the last 'failed' event may have crossed pub/sub (Redis backend): wait for
      // the events, then check them all.
      const failed = await h.eventsOnceCome('failed', 4);
      expect(failed.map((event) => event.attempt)).toEqual([1, 2, 3, 4]);
      expect(h.runs.map((run) => [run.attempt, run.runCount])).toEqual([
        [1, 1],
        [2, 1],
        [3, 1],
        [4, 1],
      ]);
      // each retry is due its backoff after the failure before it: 200, then 400 capped at 300, then 300
      expect(h.runs.slice(1).map((run, i) => run.due - failed[i].at)).toEqual([200, 300, 300]);
      for (const run of h.runs) expect(run.at).toBeGreaterThanOrEqual(run.due);
      await h.pass(700);
      expect(h.runs).toHaveLength(4);
    },
  );

  it.concurrent(
    'a retry that succeeds completes the timer; fixed backoff waits the same each time',
    async () => {
      let calls = 0;
      const h = await backend.open({
        handlers: {
          flaky: () => {
            calls += 1;
            if (calls < 3) throw new Error(`try ${calls}`);
          },
        },
      });
      await h.timers.schedule({
        key: 'f',
        handler: 'flaky',
        delay: 50,
        retry: { attempts: 5, backoff: { type: 'fixed', delay: 150 } },
      });
      await h.event({ type: 'completed', key: 'f' });
      const failed = h.eventsOf('failed');
      expect(failed.map((event) => [event.attempt, event.error?.message])).toEqual([
        [1, 'try 1'],
        [2, 'try 2'],
      ]);
      expect(calls).toBe(3);
      expect(await h.timers.get('f')).toBeNull();
    },
  );

  it.concurrent(
    'a cron retries its slot, runCount unchanged, maxRuns not in the way; then moves on to its next slot',
    async () => {
      const h = await backend.open();
      await h.timers.schedule({
        key: 'c',
        ...FAILING_CRON,
        maxRuns: 2,
        retry: { attempts: 2, backoff: { type: 'fixed', delay: 100 } },
      });
      await h.until(async () => h.runs.length === 4 && (await h.timers.get('c')) === null, {
        ...WITHIN,
        what: 'two slots of two tries',
      });
      expect(h.runs.map((run) => [run.runCount, run.attempt])).toEqual([
        [1, 1],
        [1, 2],
        [2, 1],
        [2, 2],
      ]);
      // the slot after the retried one is a later whole second
      expect(h.runs[2].due % 1_000).toBe(0);
      expect(h.runs[2].due).toBeGreaterThan(h.runs[1].at);
      // The last failed event comes with the row's removal (Redis: over pub/sub, maybe after the read above).
      const failed = await h.eventsOnceCome('failed', 4);
      expect(failed.map((event) => event.attempt)).toEqual([1, 2, 1, 2]);
    },
  );
});

describe.each(BACKENDS)('%s backend: pauseAfterFailures', (name) => {
  const backend = useBackend(name);

  it.concurrent(
    'pauses after N failed runs in a row with a paused event; resume resets the streak',
    async () => {
      const h = await backend.open();
      await h.timers.schedule({
        key: 'p',
        ...FAILING_CRON,
        pauseAfterFailures: 2,
      });
      const paused = await h.event({ type: 'paused', key: 'p' }, WITHIN);
      expect(paused).toMatchObject({ reason: 'failures', count: 2 });
      expect(h.eventsOf('failed')).toHaveLength(2);
      expect(await h.timers.get('p')).toMatchObject({ status: 'paused', pauseAfterFailures: 2 });
      await h.pass(1_500);
      expect(h.runs).toHaveLength(2);
      await h.timers.resume('p');
      // the streak starts again: one more failure does not pause it, the second does
      await h.until(() => h.eventsOf('failed').length === 3, { ...WITHIN, what: 'a failure after resume' });
      expect(h.eventsOf('paused')).toHaveLength(1);
      expect((await h.timers.get('p'))?.status).not.toBe('paused');
      await h.until(() => h.eventsOf('paused').length === 2, { ...WITHIN, what: 'the second pause' });
      expect(h.eventsOf('failed')).toHaveLength(4);
    },
  );

  it.concurrent(
    "the retries of one slot count as one failure, and an 'allow' interval pauses too",
    async () => {
      const h = await backend.open();
      await h.timers.schedule({
        key: 'p',
        ...FAILING_CRON,
        retry: { attempts: 2, backoff: { type: 'fixed', delay: 100 } },
        pauseAfterFailures: 2,
      });
      await h.event({ type: 'paused', key: 'p', reason: 'failures' }, WITHIN);
      expect(h.runs.map((run) => [run.runCount, run.attempt])).toEqual([
        [1, 1],
        [1, 2],
        [2, 1],
        [2, 2],
      ]);
      await h.timers.schedule({
        key: 'i',
        handler: 'work',
        every: 200,
        overlap: 'allow',
        payload: { fail: 'nope' },
        pauseAfterFailures: 3,
      });
      expect(await h.event({ type: 'paused', key: 'i' }, WITHIN)).toMatchObject({
        reason: 'failures',
        count: 3,
      });
      expect((await h.timers.get('i'))?.status).toBe('paused');
    },
  );
});
