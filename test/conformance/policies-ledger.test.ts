/**
 * docs/spec.md §3.3a–c with §3.9 on every backend: what the slot and run policies do shows in the ledger,
 * `next` lists what the slot policies will run, and the two kinds of policy work together.
 */
import { jitterOf, type LedgerEntry, type TimerSpec } from '@sundial/core';
import { BACKENDS, type Harness, useBackend } from './backends';

const HOUR = 3_600_000;

/** Oldest first, `[event, reason?]`, without `armed` (Redis only). */
const story = (entries: LedgerEntry[]) =>
  [...entries]
    .reverse()
    .filter((entry) => entry.event !== 'armed')
    .map(({ event, reason }) => (reason ? [event, reason] : [event]));

async function historyWith(h: Harness, key: string, event: LedgerEntry['event']): Promise<LedgerEntry[]> {
  return h.until(
    async () => {
      const entries = await h.timers.history(key);
      return entries.some((entry) => entry.event === event) && entries;
    },
    { what: `a ${event} entry for ${key}` },
  );
}

describe.each(BACKENDS)('%s backend: slot and run policies in the ledger', (name) => {
  const backend = useBackend(name);

  it("a late slot passed by catchup 'skip' is one skipped entry with its count", async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'pl:skip', handler: 'work', every: '1h', catchup: 'skip' });
    await h.downFor(10 * HOUR);
    const entries = await historyWith(h, 'pl:skip', 'skipped');
    expect(story(entries)).toEqual([['scheduled'], ['skipped', 'missed']]);
    expect(entries[0]).toMatchObject({ event: 'skipped', count: 10, version: 1 });
  });

  it('a backfill is one backfilled entry with the slots and the first one as due', async () => {
    const h = await backend.open();
    const timer = await h.timers.schedule({ key: 'pl:bf', handler: 'work', every: '1h' });
    const from = timer.scheduledAt - 3 * HOUR + 1;
    await h.timers.backfill('pl:bf', { from, to: timer.scheduledAt - HOUR });
    const backfilled = (await h.timers.history('pl:bf')).find((entry) => entry.event === 'backfilled');
    expect(backfilled).toMatchObject({
      event: 'backfilled',
      version: 2,
      count: 2,
      due: new Date(timer.scheduledAt - 2 * HOUR).toISOString(),
    });
    expect(backfilled!.reason).toBeUndefined();
  });

  it('a failed try carries its attempt and the retry armed is a retried entry with its try and due', async () => {
    const h = await backend.open();
    await h.timers.schedule({
      key: 'pl:retry',
      handler: 'work',
      delay: 50,
      payload: { fail: 'down' },
      retry: { attempts: 2, backoff: { type: 'fixed', delay: 100 } },
    });
    const entries = await h.until(
      async () => {
        const read = await h.timers.history('pl:retry');
        return read.filter((entry) => entry.event === 'failed').length === 2 && read;
      },
      { what: 'two failed tries' },
    );
    expect(story(entries)).toEqual([
      ['scheduled'],
      ['claimed'],
      ['failed'],
      ['retried'],
      ['claimed'],
      ['failed'],
    ]);
    const [last, , retried, first] = entries.filter((entry) => entry.event !== 'armed');
    expect([first.attempt, last.attempt]).toEqual([1, 2]);
    expect(retried).toMatchObject({ event: 'retried', version: 2, attempt: 2 });
    expect(Date.parse(retried.due!) - Date.parse(retried.at)).toBe(100);
  });

  it('pauseAfterFailures reached is a paused entry with reason failures and the streak', async () => {
    const h = await backend.open();
    await h.timers.schedule({
      key: 'pl:pause',
      handler: 'work',
      cron: '* * * * * *',
      tz: 'UTC',
      payload: { fail: 'down' },
      pauseAfterFailures: 1,
    });
    const entries = await historyWith(h, 'pl:pause', 'paused');
    expect(entries[0]).toMatchObject({ event: 'paused', reason: 'failures', count: 1 });
    expect(story(entries).slice(-2)).toEqual([['failed'], ['paused', 'failures']]);
  });
});

describe.each(BACKENDS)('%s backend: next and preview follow the slot policies', (name) => {
  const backend = useBackend(name);

  it('next lists each slot moved by its jitter and none after endAt; preview the same for a new spec', async () => {
    const h = await backend.open();
    const now = await h.now();
    // endAt between the 4th and the 5th slot
    const spec = {
      key: 'pl:next',
      handler: 'work',
      every: '1h',
      jitter: '10m',
      endAt: now + 4 * HOUR + 30_000,
    } satisfies TimerSpec;
    const timer = await h.timers.schedule(spec);
    const slots = [1, 2, 3, 4].map((k) => timer.scheduledAt + k * HOUR);
    const dues = slots.map((slot) => new Date(slot + jitterOf('pl:next', slot, 600_000)).toISOString());
    const next = await h.timers.next('pl:next', { count: 10 });
    expect(next.map((time) => time.at)).toEqual(dues);
    expect(next[0].at).toBe(new Date(timer.dueAt).toISOString());
    const preview = await h.timers.preview({ ...spec, key: 'pl:preview' }, { count: 10 });
    expect(preview.next).toHaveLength(4);
    // each a slot (an hour after the one before) moved by less than the jitter
    const gaps = preview.next.slice(1).map((time, i) => Date.parse(time.at) - Date.parse(preview.next[i].at));
    for (const gap of gaps) expect(Math.abs(gap - HOUR)).toBeLessThan(600_000);
  });

  it('next starts at startAt; preview refuses an endAt before the first slot as schedule does', async () => {
    const h = await backend.open();
    const now = await h.now();
    const startAt = now + 5 * HOUR;
    const timer = await h.timers.schedule({ key: 'pl:start', handler: 'work', every: '1h', startAt });
    const next = await h.timers.next('pl:start', { count: 3 });
    expect(Date.parse(next[0].at)).toBe(timer.dueAt);
    expect(timer.dueAt).toBeGreaterThanOrEqual(startAt);
    expect(next.map((time) => Date.parse(time.at) - timer.dueAt)).toEqual([0, HOUR, 2 * HOUR]);
    // the first grid slot not before startAt + 30m is 6 hours after creation: after endAt
    const late = { startAt: startAt + HOUR / 2, endAt: startAt + HOUR / 2 + 1_000 };
    await expect(
      h.timers.preview({ key: 'pl:bad', handler: 'work', every: '1h', ...late }),
    ).rejects.toMatchObject({ reason: 'invalid', field: 'endAt' });
  });

  it('a timer resumed before its startAt resumes at its first slot, not before it (§3.3c)', async () => {
    const h = await backend.open();
    const startAt = (await h.now()) + 5 * HOUR;
    const interval = await h.timers.schedule({ key: 'pl:ri', handler: 'work', every: '1h', startAt });
    const cron = await h.timers.schedule({
      key: 'pl:rc',
      handler: 'work',
      cron: '0 * * * *',
      tz: 'UTC',
      startAt,
    });
    for (const timer of [interval, cron]) {
      await h.timers.pause(timer.key);
      // no slot before startAt: the one it was armed for is still the first (an interval's grid unmoved)
      expect(await h.timers.resume(timer.key)).toMatchObject({ status: 'pending', dueAt: timer.dueAt });
      expect(Date.parse((await h.timers.next(timer.key, { count: 1 }))[0].at)).toBe(timer.dueAt);
    }
  });
});

describe.each(BACKENDS)('%s backend: slot and run policies together', (name) => {
  const backend = useBackend(name);

  it("refuses catchup 'all' with overlap 'allow' or 'cancel-other': their slots are armed at claim", async () => {
    const h = await backend.open();
    for (const overlap of ['allow', 'cancel-other'] as const) {
      await expect(
        h.timers.schedule({ key: 'pl:all', handler: 'work', every: '1h', catchup: 'all', overlap }),
      ).rejects.toMatchObject({ reason: 'invalid', field: 'catchup', fix: expect.stringMatching(/overlap/) });
    }
    expect(await h.timers.get('pl:all')).toBeNull();
  });

  it("an 'allow' cron arms its next slot at claim moved by its jitter, and stops at endAt", async () => {
    const h = await backend.open();
    const now = await h.now();
    const timer = await h.timers.schedule({
      key: 'pl:allow',
      handler: 'work',
      cron: '* * * * * *',
      tz: 'UTC',
      overlap: 'allow',
      jitter: 400,
      // two slots or more before it even if the call lands 2.5 s late (a loaded machine)
      endAt: now + 4_500,
      // a run lasts longer than two slots are apart (at most 1.4 s, jitter included): it overlaps the next
      payload: { sleepMs: 2_500 },
    });
    await h.event({ type: 'completed', key: 'pl:allow', reason: 'ended' }, { within: 12_000 }); // deadline
    expect(h.runs.length).toBeGreaterThanOrEqual(2);
    for (const run of h.runs) {
      const slot = run.due - (run.due % 1_000);
      expect(run.due - slot).toBe(jitterOf('pl:allow', slot, 400));
      expect(slot).toBeLessThanOrEqual(timer.endAt!);
    }
    // the runs overlapped: the second started before the first's completed event (not a fixed time
    // after the first's start, which a late runner passes)
    const first = await h.event({ type: 'completed', key: 'pl:allow', version: h.runs[0].version });
    expect(h.runs[1].at).toBeLessThan(first.at);
  });
});
