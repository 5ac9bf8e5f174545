/**
 * docs/spec.md §3.9 on every backend: a run that ends its timer unasked (its cron's next slot is after
 * `endAt`, §3.3c; the last run `maxRuns` allows, §3.3) says so in its ledger entry, failed as well as
 * completed. A completed entry's `reason` is that end; a failed one's `reason` is its error's, so the end
 * is its `ended` — the same values (`ended`, `no-next-slot`, `max-runs`), as the event's `reason` has them.
 *
 * The tests run side by side (`it.concurrent`), each on its own timers, dispatcher and runner.
 */
import type { LedgerEntry, TimerContext, TimerSpec } from '@sundial/core';
import { BACKENDS, type Harness, useBackend } from './backends';

// deadline (backend time: virtual on the engine, real on Redis): each wait is left as soon as its outcome shows
const WITHIN = { within: 12_000 };
const EVERY_SECOND = { cron: '* * * * * *', tz: 'UTC' } as const;

/**
 * A cron on every whole second whose endAt is 4.5 s after the whole second before now: the run of the last
 * slot before it ends it. (At least 3 s for the schedule call to land before that slot: under load a Redis
 * call can take over 1.5 s, and a first slot after endAt is refused.)
 */
async function endingCron(h: Harness, spec: Omit<TimerSpec, 'handler' | 'cron' | 'tz'>): Promise<void> {
  const now = await h.now();
  const endAt = Math.floor(now / 1_000) * 1_000 + 4_500;
  await h.timers.schedule({ handler: 'work', ...EVERY_SECOND, endAt, ...spec });
}

/** The ledger of `key` once its newest entry is a run's outcome that ended the timer (`completed` or `failed`). */
async function endedHistory(h: Harness, key: string, event: LedgerEntry['event']): Promise<LedgerEntry[]> {
  await h.until(
    async () => {
      const timer = await h.timers.get(key);
      return (timer === null || timer.status === 'completed' || timer.status === 'failed') && true;
    },
    { ...WITHIN, what: `${key} to end` },
  );
  return h.until(
    async () => {
      const entries = await h.timers.history(key);
      return entries[0]?.event === event && entries;
    },
    { ...WITHIN, what: `a ${event} entry for ${key}` },
  );
}

/** The outcomes of the runs, oldest first, with the fields that say what happened. */
const outcomes = (entries: LedgerEntry[]) =>
  [...entries]
    .reverse()
    .filter((entry) => entry.event === 'completed' || entry.event === 'failed')
    .map(({ event, reason, message, ended }) => ({ event, reason, message, ended }));

describe.each(BACKENDS)('%s backend: a run that ends its timer says so in the ledger', (name) => {
  const backend = useBackend(name);

  it.concurrent.each([
    ['kept', false],
    ['removed', true],
  ])(
    'a failed run whose endAt ends its cron (%s): its entry has its error and ended',
    async (_case, removeOnComplete) => {
      const h = await backend.open();
      await endingCron(h, { key: 'fe', payload: { fail: 'down', reason: 'quota' }, removeOnComplete });
      const entries = await endedHistory(h, 'fe', 'failed');
      const runs = outcomes(entries);
      const failed = { event: 'failed', reason: 'quota', message: 'down', ended: undefined };
      // every run failed; only the last ended the timer, and its entry says both
      expect(runs).toEqual([...runs.slice(1).map(() => failed), { ...failed, ended: 'ended' }]);
      expect(entries[0]).toMatchObject({ event: 'failed', attempt: 1, due: expect.any(String) });
      const timer = await h.timers.get('fe');
      if (removeOnComplete) expect(timer).toBeNull();
      else expect(timer).toMatchObject({ status: 'failed', last: { error: { reason: 'quota' } } });
    },
  );

  it.concurrent('a failed run with no error reason: its reason stays unset, ended says the end', async () => {
    const h = await backend.open();
    await endingCron(h, { key: 'fp', payload: { fail: 'down' }, removeOnComplete: false });
    const [last] = await endedHistory(h, 'fp', 'failed');
    expect(last).toMatchObject({ event: 'failed', message: 'down', ended: 'ended' });
    expect(last.reason).toBeUndefined();
  });

  it.concurrent('a completed run that ends its cron: reason ended, as before (no ended field)', async () => {
    const h = await backend.open();
    await endingCron(h, { key: 'ok', removeOnComplete: false });
    const [last] = await endedHistory(h, 'ok', 'completed');
    expect(last).toMatchObject({ event: 'completed', reason: 'ended' });
    expect(last).not.toHaveProperty('ended');
    expect(last).not.toHaveProperty('message');
  });
});

/**
 * `key` once its run number `runs`, the last its maxRuns allows, has ended it with `type`: its row (null
 * when removed) says so, and its `type` events' reasons are none but the last's, `max-runs`. Its ledger.
 */
async function endedAtMaxRuns(
  h: Harness,
  key: string,
  type: 'completed' | 'failed',
  runs: number,
  kept = true,
): Promise<LedgerEntry[]> {
  const entries = await endedHistory(h, key, type);
  const timer = await h.timers.get(key);
  if (kept) expect(timer).toMatchObject({ status: type, runCount: runs });
  else expect(timer).toBeNull();
  // on Redis events cross pub/sub: the row can end before its events come
  const events = await h.until(
    () => {
      const seen = h.eventsOf(type).filter((event) => event.key === key);
      return seen.length >= runs && seen;
    },
    { ...WITHIN, what: `${runs} ${type} events of ${key}` },
  );
  expect(events.map((event) => event.reason)).toEqual([...Array(runs - 1).fill(undefined), 'max-runs']);
  return entries;
}

describe.each(BACKENDS)('%s backend: the run that reaches maxRuns says so (max-runs)', (name) => {
  const backend = useBackend(name);
  const kept = { handler: 'work', removeOnComplete: false } as const;
  /** an interval whose ticks run free (awaitTask false): the one maxRuns allows last is held */
  const FREE = { every: 100, awaitTask: false, overlap: 'allow' } as const;

  it.concurrent(
    'a completed interval run at maxRuns: reason max-runs, on its entry and its event',
    async () => {
      const h = await backend.open();
      await h.timers.schedule({ key: 'mc', ...kept, every: 100, maxRuns: 2 });
      const completed = { event: 'completed', reason: undefined, message: undefined, ended: undefined };
      const entries = await endedAtMaxRuns(h, 'mc', 'completed', 2);
      expect(outcomes(entries)).toEqual([completed, { ...completed, reason: 'max-runs' }]);
    },
  );

  it.concurrent(
    "a failed cron run at maxRuns: its error's reason, ended max-runs, as its event",
    async () => {
      const h = await backend.open();
      const payload = { fail: 'down', reason: 'quota' };
      await h.timers.schedule({ key: 'mf', ...kept, ...EVERY_SECOND, maxRuns: 2, payload });
      const entries = await endedAtMaxRuns(h, 'mf', 'failed', 2);
      const failed = { event: 'failed', reason: 'quota', message: 'down', ended: undefined };
      expect(outcomes(entries)).toEqual([failed, { ...failed, ended: 'max-runs' }]);
      const errors = h.eventsOf('failed').filter((event) => event.key === 'mf');
      expect(errors.map((event) => event.error?.reason)).toEqual(['quota', 'quota']);
    },
  );

  it.concurrent('a failed interval run that is also its last allowed (removed): max-runs wins', async () => {
    const h = await backend.open();
    // an awaiting interval ends with any failure (no end reason); this one is the run maxRuns allows too
    const spec = { every: 100, maxRuns: 1, payload: { fail: 'down' } };
    await h.timers.schedule({ key: 'mi', handler: 'work', ...spec });
    const [last] = await endedAtMaxRuns(h, 'mi', 'failed', 1, false);
    expect(last).toMatchObject({ event: 'failed', message: 'down', ended: 'max-runs' });
    expect(last.reason).toBeUndefined();
  });

  it.concurrent('the last allowed run is also the last before endAt: max-runs wins over ended', async () => {
    const h = await backend.open();
    // a cron from a whole second 3 s on (after the call lands, however late): its first two slots come
    // before endAt, the third after it, and maxRuns allows two: the second run ends the timer both ways.
    // (An interval's slots count from creation, which comes when the call lands.)
    const startAt = Math.ceil(((await h.now()) + 3_000) / 1_000) * 1_000;
    const window = { startAt, endAt: startAt + 1_500, maxRuns: 2 };
    await h.timers.schedule({ key: 'me', ...kept, ...EVERY_SECOND, ...window });
    const [last] = await endedAtMaxRuns(h, 'me', 'completed', 2);
    expect(last).toMatchObject({ event: 'completed', reason: 'max-runs' });
  });

  it.concurrent('free ticks (awaitTask false): the last allowed run, held, says max-runs', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'mx', ...kept, ...FREE, maxRuns: 3 });
    const [last] = await endedAtMaxRuns(h, 'mx', 'completed', 3);
    expect(last).toMatchObject({ event: 'completed', reason: 'max-runs' });
  });

  // The engine removed the timer with its final run and called the free run's end stale (gone): nothing had
  // cancelled, replaced or disposed it, and Redis (§3.8) keeps the row until the run ends and records it.
  it.concurrent(
    'a free run still going when the last allowed run ends the timer: its own outcome',
    async () => {
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      // the first tick runs until released, the second (the last maxRuns allows, held) at once
      const slow = async (_payload: unknown, ctx: TimerContext) => (ctx.runCount === 1 ? held : undefined);
      const h = await backend.open({ handlers: { slow } });
      await h.timers.schedule({ key: 'mo', handler: 'slow', ...FREE, maxRuns: 2 });
      await h.event({ type: 'completed', key: 'mo', reason: 'max-runs' }, WITHIN);
      // kept while its free run goes on, ended: as Redis keeps its row (`rp`)
      expect(await h.timers.get('mo')).toMatchObject({ status: 'completed', runCount: 2 });
      release();
      const ended = await h.event({ type: 'completed', key: 'mo', version: 1 }, WITHIN);
      expect(ended.reason).toBeUndefined();
      expect(h.events.filter((event) => event.key === 'mo' && event.type === 'stale')).toEqual([]);
      const entries = await h.until(async () => {
        const history = await h.timers.history('mo');
        return history[0]?.version === 1 && history;
      }, WITHIN);
      expect(entries[0]).toMatchObject({ event: 'completed', version: 1 });
      expect(entries[1]).toMatchObject({ event: 'completed', version: 2, reason: 'max-runs' });
      // removed (removeOnComplete) once its last run ended
      await h.until(async () => (await h.timers.get('mo')) === null, WITHIN);
    },
  );

  it.concurrent('a failure at maxRuns reaching pauseAfterFailures: max-runs, not paused', async () => {
    const h = await backend.open();
    const failing = { maxRuns: 2, pauseAfterFailures: 2, payload: { fail: 'down' } };
    await h.timers.schedule({ key: 'mp', ...kept, ...FREE, ...failing });
    const entries = await endedAtMaxRuns(h, 'mp', 'failed', 2);
    expect(entries.map((entry) => entry.event)).not.toContain('paused');
    expect(entries[0]).toMatchObject({ event: 'failed', message: 'down', ended: 'max-runs' });
  });
});
