/**
 * docs/spec.md §3.9 on every backend: the same ledger entries, in the same order, for the same story.
 * `armed` (the dispatcher's hand-off) exists only on Redis and `workerId` only where workers claim: the
 * stories below leave them out.
 */
import type { LedgerEntry } from '@sundial/core';
import { BACKENDS, type Harness, useBackend } from './backends';

/** describe's counters of a timer nothing has happened to. */
const NO_COUNTS = { runs: 0, failures: 0, stale: 0, skipped: 0, lost: 0, requeued: 0 };

/** Oldest first, `[event, version, reason?]`, without `armed`. */
const story = (entries: LedgerEntry[]) =>
  [...entries]
    .reverse()
    .filter((entry) => entry.event !== 'armed')
    .map(({ event, version, reason }) => (reason ? [event, version, reason] : [event, version]));

/** A run's entry names its worker on Redis (§3.9). */
const worker = (h: Harness) => (h.backend === 'redis' ? { workerId: expect.any(String) } : {});

async function historyWhen(h: Harness, key: string, last: LedgerEntry['event']): Promise<LedgerEntry[]> {
  return h.until(
    async () => {
      const entries = await h.timers.history(key);
      return entries[0]?.event === last && entries;
    },
    { what: `a ${last} entry for ${key}` },
  );
}

describe.each(BACKENDS)('%s backend: the ledger', (name) => {
  const backend = useBackend(name);

  it('a one-shot run: scheduled, claimed, completed — each with its version and due', async () => {
    const h = await backend.open();
    const timer = await h.timers.schedule({ key: 'l:once', handler: 'work', delay: 50 });
    const entries = await historyWhen(h, 'l:once', 'completed');
    expect(story(entries)).toEqual([
      ['scheduled', 1],
      ['claimed', 1],
      ['completed', 1],
    ]);
    const due = new Date(timer.dueAt).toISOString();
    expect(entries[0]).toMatchObject({ event: 'completed', version: 1, due });
    expect(entries.at(-1)).toEqual({
      at: new Date(timer.scheduledAt).toISOString(),
      event: 'scheduled',
      version: 1,
    });
    // Removed on completion, its ledger is still there to read.
    expect(await h.timers.get('l:once')).toBeNull();
  });

  it('operations: paused, resumed, triggered, rescheduled, cancelled, each with the version it made', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'l:ops', handler: 'work', delay: '1h' });
    await h.timers.pause('l:ops');
    await h.timers.resume('l:ops');
    await h.timers.reschedule('l:ops', { delay: '2h' });
    await h.timers.cancel('l:ops');
    const entries = await h.timers.history('l:ops');
    expect(story(entries)).toEqual([
      ['scheduled', 1],
      ['paused', 2],
      ['resumed', 3],
      ['rescheduled', 4],
      ['cancelled', 5, 'cancelled'],
    ]);
    expect(entries[1].due).toBe(new Date(Date.parse(entries[1].at) + 2 * 3_600_000).toISOString());
  });

  it('cancelAll records every cancel (reason cancelled, or reset when global); a key scheduled again goes on', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'l:bulk:fresh', handler: 'work', delay: '1h' });
    await h.timers.schedule({ key: 'l:bulk:listed', handler: 'work', delay: '1h' });
    await h.timers.pause('l:bulk:listed');
    await h.timers.schedule({ key: 'l:other', handler: 'work', delay: '1h' });
    expect(await h.timers.cancelAll('l:bulk:')).toBe(2);
    expect(story(await h.timers.history('l:bulk:fresh'))).toEqual([
      ['scheduled', 1],
      ['cancelled', 2, 'cancelled'],
    ]);
    expect(story(await h.timers.history('l:bulk:listed'))).toEqual([
      ['scheduled', 1],
      ['paused', 2],
      ['cancelled', 3, 'cancelled'],
    ]);
    expect(await h.timers.cancelAll()).toBe(1);
    expect(story(await h.timers.history('l:other'))).toEqual([
      ['scheduled', 1],
      ['cancelled', 2, 'reset'],
    ]);
    await h.timers.schedule({ key: 'l:bulk:fresh', handler: 'work', delay: '1h' });
    await h.timers.pause('l:bulk:fresh');
    expect(story(await h.timers.history('l:bulk:fresh'))).toEqual([
      ['scheduled', 1],
      ['cancelled', 2, 'cancelled'],
      ['scheduled', 1],
      ['paused', 2],
    ]);
  });

  it('a failed run: its message and reason; a trigger run; counters from the row and the ledger', async () => {
    const h = await backend.open();
    await h.timers.schedule({
      key: 'l:fail',
      handler: 'work',
      every: '1h',
      payload: { fail: 'boom', reason: 'upstream' },
    });
    await h.timers.trigger('l:fail');
    const entries = await historyWhen(h, 'l:fail', 'failed');
    expect(story(entries)).toEqual([
      ['scheduled', 1],
      ['triggered', 2],
      ['claimed', 2],
      ['failed', 2, 'upstream'],
    ]);
    expect(entries[0].message).toBe('boom');
    const description = await h.timers.describe('l:fail', { count: 2 });
    expect(description.counters).toEqual({ ...NO_COUNTS, runs: 1, failures: 1 });
    expect(description.next).toHaveLength(2);
    expect(description.history).toEqual(entries);
  });

  // A handler's error may carry any reason, `lost` too: its run failed (sundial_runs_total counts it
  // failed), no worker was lost. Both backends recorded it `lost` and counted it in counters.lost.
  it("a handler that throws reason 'lost' failed: its entry is failed, counted in failures, not lost", async () => {
    const h = await backend.open();
    await h.timers.schedule({
      key: 'l:says-lost',
      handler: 'work',
      delay: 20,
      payload: { fail: 'connection lost', reason: 'lost' },
      removeOnComplete: false,
    });
    const entries = await historyWhen(h, 'l:says-lost', 'failed');
    expect(story(entries)).toEqual([
      ['scheduled', 1],
      ['claimed', 1],
      ['failed', 1, 'lost'],
    ]);
    expect(entries[0]).toMatchObject({ message: 'connection lost', attempt: 1 });
    const { counters } = await h.timers.describe('l:says-lost');
    expect(counters).toEqual({ ...NO_COUNTS, runs: 1, failures: 1 });
  });

  it("counters are the timer's own: an earlier timer of its key stays in the history, not in the counts", async () => {
    const h = await backend.open();
    const failing = { handler: 'work', every: '1h', payload: { fail: 'boom' } } as const;
    await h.timers.schedule({ key: 'l:again', ...failing });
    await h.timers.trigger('l:again');
    await historyWhen(h, 'l:again', 'failed');
    await h.timers.cancel('l:again');
    await h.timers.schedule({ key: 'l:again', handler: 'work', every: '1h' });
    const again = await h.timers.describe('l:again');
    expect(again.counters).toEqual(NO_COUNTS);
    expect(story(again.history).map(([event]) => event)).toEqual([
      'scheduled',
      'triggered',
      'claimed',
      'failed',
      'cancelled',
      'scheduled',
    ]);

    // A replace starts a timer too: the failure before it is the replaced one's.
    await h.timers.schedule({ key: 'l:replaced', ...failing });
    await h.timers.trigger('l:replaced');
    await historyWhen(h, 'l:replaced', 'failed');
    await h.timers.schedule({ key: 'l:replaced', ...failing, ifExists: 'replace' });
    const replaced = await h.timers.describe('l:replaced');
    expect(replaced.counters).toEqual(NO_COUNTS);
    expect(replaced.history.map(({ event }) => event)).toContain('failed');
  });

  it('a replace while a run is in flight: its completion is stale (gone), after the replace, in order', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'l:race', handler: 'work', delay: 20, payload: { sleepMs: 300 } });
    await h.event({ type: 'running', key: 'l:race' });
    await h.timers.schedule({ key: 'l:race', handler: 'work', delay: '1h', ifExists: 'replace' });
    const entries = await historyWhen(h, 'l:race', 'stale');
    expect(story(entries)).toEqual([
      ['scheduled', 1],
      ['claimed', 1],
      ['replaced', 2],
      ['scheduled', 1],
      ['stale', 1, 'gone'],
    ]);
    // That stale run was the replaced timer's: not one of the new timer's counts.
    expect((await h.timers.describe('l:race')).counters.stale).toBe(0);
  });

  it('history: limit is checked, an unknown key is not-found; preview writes nothing', async () => {
    const h = await backend.open();
    // the message says that there is no history either: "no live timer" would hide that history outlives it
    await expect(h.timers.history('l:never')).rejects.toMatchObject({
      reason: 'not-found',
      field: 'key',
      message: expect.stringMatching(/^No timer and no history under key "l:never"/),
    });
    await h.timers.schedule({ key: 'l:lim', handler: 'work', delay: '1h' });
    await expect(h.timers.history('l:lim', { limit: 0 })).rejects.toMatchObject({
      reason: 'invalid',
      field: 'limit',
    });
    const preview = await h.timers.preview(
      { key: 'l:pv', handler: 'work', every: '1m', maxRuns: 2 },
      { count: 5 },
    );
    expect(preview.spec).toMatchObject({ kind: 'interval', everyMs: 60_000, maxRuns: 2 });
    expect(preview.next).toHaveLength(2);
    await expect(h.timers.preview({ key: 'l:pv', handler: 'work' })).rejects.toMatchObject({
      reason: 'invalid',
    });
    expect(await h.timers.get('l:pv')).toBeNull();
    await expect(h.timers.history('l:pv')).rejects.toMatchObject({ reason: 'not-found' });
  });

  it('the slots a run went past come after its outcome, in the ledger and in the events', async () => {
    const h = await backend.open();
    const retry = { attempts: 2, backoff: { type: 'fixed', delay: 3_600_000 } } as const;
    const failing = { every: '1h', payload: { fail: 'no' }, retry } as const;
    for (const [key, spec] of [
      ['l:ok', { every: '1h' }],
      ['l:fail', failing],
    ] as const) {
      await h.timers.schedule({ key, handler: 'work', ...spec });
    }
    // down 4.5 h: the 1 h slot's run is late, and the slots at 2 h, 3 h and 4 h are gone past
    await h.downFor(4.5 * 3_600_000);
    await h.eventsOnceCome('skipped', 2);
    const ends = {
      'l:ok': [['completed', 1]],
      'l:fail': [
        ['failed', 1],
        ['retried', 2],
      ],
    };
    for (const [key, end] of Object.entries(ends)) {
      // the engine recorded (and emitted) the skipped slots before the outcome, its entry with the event's due
      const entries = await historyWhen(h, key, 'skipped');
      expect(story(entries).slice(-end.length - 1)).toEqual([...end, ['skipped', 1, 'missed']]);
      const { workerId: _worker, ...skipped } = entries[0]; // Redis's own
      expect(skipped).toEqual({
        at: expect.any(String),
        event: 'skipped',
        version: 1,
        reason: 'missed',
        count: 3,
      });
      const types = h.events.filter((e) => e.key === key && e.type !== 'scheduled' && e.type !== 'running');
      expect(types.map((e) => e.type)).toEqual([end[0][0], 'skipped']);
    }
  });

  it("a free run's outcome entry has no due: its row has moved on to the next tick", async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'l:free', handler: 'work', every: '1h', awaitTask: false });
    await h.timers.reschedule('l:free', { at: (await h.now()) - 90 * 60_000 });
    const [completed] = await historyWhen(h, 'l:free', 'completed');
    // the engine gave it the run's due, as a held run's entry has
    expect(completed).toEqual({ at: expect.any(String), event: 'completed', version: 2, ...worker(h) });
  });
});
