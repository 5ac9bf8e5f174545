/**
 * docs/spec.md §3.9 on every backend: the ledger of ONE key across the several timers it holds over
 * time — run and removed, cancelled, replaced (pending, running, finished but kept), paused and moved,
 * bulk-cancelled — and scheduled again: every entry once, in the order it happened, with its version,
 * reason and due; `history`'s limit and the ledger's size; `describe` and `next` of the key's newest timer.
 * `armed` (Redis only) is left out of the stories; every test also checks that `at` never goes back.
 */
import type { LedgerEntry, TimerHandler } from '@sundial/core';
import { BACKENDS, type Harness, useBackend } from './backends';

/**
 * Oldest first, `event version [reason]` joined by ', ', without `armed` (so: the same on both backends);
 * checks that the entries are in time order.
 */
function lives(entries: LedgerEntry[]): string {
  const ats = entries.map((entry) => Date.parse(entry.at));
  expect(ats).toEqual([...ats].sort((a, b) => b - a));
  return entries
    .filter((entry) => entry.event !== 'armed')
    .reverse()
    .map(({ event, version, reason }) => [event, version, ...(reason ? [reason] : [])].join(' '))
    .join(', ');
}

/** The history of `key` once its story (without `armed`) has `length` lines. */
function storyOf(h: Harness, key: string, length: number, within?: number): Promise<LedgerEntry[]> {
  return h.until(
    async () => {
      const entries = await h.timers.history(key);
      return entries.filter((entry) => entry.event !== 'armed').length >= length && entries;
    },
    { what: `${length} ledger entries for ${key}`, within },
  );
}

/** Handler `held`: each run waits until the test opens the gate its payload names. */
function gates() {
  const open = new Map<string, () => void>();
  const opened = new Map<string, Promise<void>>();
  const gate = (name: string) => {
    if (!opened.has(name)) opened.set(name, new Promise<void>((resolve) => open.set(name, resolve)));
    return opened.get(name)!;
  };
  const held: TimerHandler = (payload) => gate((payload as { gate: string }).gate);
  return { held, release: (name: string) => (gate(name), open.get(name)!()) };
}

const iso = (ms: number) => new Date(ms).toISOString();
const NONE = { runs: 0, failures: 0, stale: 0, skipped: 0, lost: 0, requeued: 0 };

describe.each(BACKENDS)('%s backend: the ledger of one key over several timers', (name) => {
  const backend = useBackend(name);

  it('one-shots run and removed, the key scheduled again each time: one story, each run with its due', async () => {
    const h = await backend.open();
    const first = await h.timers.schedule({ key: 'o', handler: 'work', delay: 30 });
    await storyOf(h, 'o', 3);
    const second = await h.timers.schedule({ key: 'o', handler: 'work', delay: 30 });
    await storyOf(h, 'o', 6);
    const third = await h.timers.schedule({ key: 'o', handler: 'work', delay: '1h' });
    const entries = await h.timers.history('o');
    expect(lives(entries)).toEqual(
      'scheduled 1, claimed 1, completed 1, scheduled 1, claimed 1, completed 1, scheduled 1',
    );
    const dues = (event: string) => entries.filter((entry) => entry.event === event).map(({ due }) => due);
    expect(dues('completed')).toEqual([iso(second.dueAt), iso(first.dueAt)]);
    expect(dues('claimed')).toEqual([iso(second.dueAt), iso(first.dueAt)]);
    expect(entries[0]).toEqual({ at: iso(third.scheduledAt), event: 'scheduled', version: 1 });
    const description = await h.timers.describe('o');
    expect(description.counters).toEqual(NONE);
    expect(description.next.map(({ at }) => at)).toEqual([iso(third.dueAt)]);
  });

  it('cancel, schedule again, cancel; keep answers the cancelled timer and writes nothing', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'c', handler: 'work', delay: '1h' });
    expect(await h.timers.cancel('c')).toBe(true);
    const kept = await h.timers.schedule({ key: 'c', handler: 'work', delay: '2h', ifExists: 'keep' });
    expect(kept).toMatchObject({ status: 'cancelled', version: 2 });
    await h.timers.schedule({ key: 'c', handler: 'work', delay: '1h' });
    expect(await h.timers.cancel('c')).toBe(true);
    expect(await h.timers.cancel('c')).toBe(false);
    expect(lives(await h.timers.history('c'))).toEqual(
      'scheduled 1, cancelled 2 cancelled, scheduled 1, cancelled 2 cancelled',
    );
  });

  it('cancelAll scoped, then global (reset), each key scheduled again between: both kinds of key', async () => {
    const h = await backend.open();
    // `b:ran` has a stored ledger (it ran); `b:fresh` has none (its scheduled entry is implied)
    await h.timers.schedule({ key: 'b:ran', handler: 'work', every: '1h' });
    await h.timers.trigger('b:ran');
    await storyOf(h, 'b:ran', 4);
    await h.timers.schedule({ key: 'b:fresh', handler: 'work', delay: '1h' });
    expect(await h.timers.cancelAll('b:')).toBe(2);
    expect(
      await h.timers.schedule({ key: 'b:fresh', handler: 'work', delay: '1h', ifExists: 'keep' }),
    ).toMatchObject({
      status: 'cancelled',
    });
    for (const key of ['b:ran', 'b:fresh']) await h.timers.schedule({ key, handler: 'work', delay: '1h' });
    expect(await h.timers.cancelAll()).toBe(2);
    for (const key of ['b:ran', 'b:fresh']) await h.timers.schedule({ key, handler: 'work', delay: '1h' });
    await h.timers.pause('b:fresh');
    expect(await h.timers.cancelAll('b:f')).toBe(1);
    // (b:ran's trigger run, at its end, armed its due again: version 3)
    expect(lives(await h.timers.history('b:ran'))).toEqual(
      'scheduled 1, triggered 2, claimed 2, completed 2, cancelled 4 cancelled, scheduled 1, cancelled 2 reset, scheduled 1',
    );
    expect(lives(await h.timers.history('b:fresh'))).toEqual(
      'scheduled 1, cancelled 2 cancelled, scheduled 1, cancelled 2 reset, scheduled 1, paused 2, cancelled 3 cancelled',
    );
    expect((await h.timers.describe('b:ran')).counters).toEqual(NONE);
  });

  it('cancelAll while runs go on (a key with a stored ledger, one without): each stale end recorded once', async () => {
    const { held, release } = gates();
    const h = await backend.open({ handlers: { held } });
    await h.timers.schedule({ key: 'g:new', handler: 'held', delay: 20, payload: { gate: 'g' } });
    await h.timers.schedule({ key: 'g:old', handler: 'held', every: '1h', payload: { gate: 'g' } });
    await h.timers.trigger('g:old');
    for (const key of ['g:new', 'g:old']) await h.event({ type: 'running', key });
    expect(await h.timers.cancelAll()).toBe(2);
    release('g');
    await h.eventsOnceCome('stale', 2);
    const old = 'scheduled 1, triggered 2, claimed 2, cancelled 3 reset, stale 2 gone';
    expect(lives(await storyOf(h, 'g:old', 5))).toEqual(old);
    expect(lives(await storyOf(h, 'g:new', 4))).toEqual(
      'scheduled 1, claimed 1, cancelled 2 reset, stale 1 gone',
    );
    await h.timers.schedule({ key: 'g:old', handler: 'work', delay: '1h' });
    expect(lives(await h.timers.history('g:old'))).toEqual(`${old}, scheduled 1`);
  });

  it('replace while pending; replace and keep on a finished row kept by removeOnComplete: false', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'r:p', handler: 'work', delay: '1h' });
    await h.timers.schedule({ key: 'r:p', handler: 'work', delay: '2h', ifExists: 'replace' });
    expect(lives(await h.timers.history('r:p'))).toEqual('scheduled 1, replaced 2, scheduled 1');

    const ran = 'scheduled 1, claimed 1, completed 1';
    for (const ifExists of ['replace', 'keep', 'error'] as const) {
      const key = `r:${ifExists}`;
      await h.timers.schedule({ key, handler: 'work', delay: 20, removeOnComplete: false });
      await storyOf(h, key, 3);
      // the finished row does not hold its key: every ifExists makes a new timer, and nothing is replaced
      const timer = await h.timers.schedule({ key, handler: 'work', delay: '1h', ifExists });
      expect(timer).toMatchObject({ status: 'pending', version: 1 });
      expect(lives(await h.timers.history(key))).toEqual(`${ran}, scheduled 1`);
    }
    // a cancel of a finished kept row answers false and records nothing; the key goes on
    await h.timers.schedule({ key: 'r:gone', handler: 'work', delay: 20, removeOnComplete: false });
    await storyOf(h, 'r:gone', 3);
    expect(await h.timers.cancel('r:gone')).toBe(false);
    expect(lives(await h.timers.history('r:gone'))).toEqual(ran);
    await h.timers.schedule({ key: 'r:gone', handler: 'work', delay: '1h' });
    expect(lives(await h.timers.history('r:gone'))).toEqual(`${ran}, scheduled 1`);
  });

  it("replace while running: the old run's stale end comes in the order it happened, after the new run's claim", async () => {
    const { held, release } = gates();
    const h = await backend.open({ handlers: { held } });
    await h.timers.schedule({ key: 'rr', handler: 'held', delay: 20, payload: { gate: 'old' } });
    await h.event({ type: 'running', key: 'rr' });
    const fresh = await h.timers.schedule({
      key: 'rr',
      handler: 'held',
      delay: 20,
      payload: { gate: 'new' },
      ifExists: 'replace',
    });
    await h.event({ type: 'running', key: 'rr', id: fresh.id });
    await storyOf(h, 'rr', 5);
    release('old'); // its handler ignores the abort: its end comes while the new run goes on
    await storyOf(h, 'rr', 6);
    const running = await h.timers.history('rr');
    release('new');
    const done = await storyOf(h, 'rr', 7);
    const before = 'scheduled 1, claimed 1, replaced 2, scheduled 1, claimed 1, stale 1 gone';
    expect(lives(running)).toEqual(before);
    expect(lives(done)).toEqual(`${before}, completed 1`);
  });

  it('no tombstone: cancel while running, schedule again, the old run ends: its stale entry starts the new ledger', async () => {
    const { held, release } = gates();
    const h = await backend.open({ handlers: { held }, tombstoneMs: 0 });
    await h.timers.schedule({ key: 'nt', handler: 'held', delay: 20, payload: { gate: 'old' } });
    await h.event({ type: 'running', key: 'nt' });
    await h.timers.cancel('nt');
    // due 4 s on, a margin for a loaded host: the old run's end (at once) comes before its hand-off
    await h.timers.schedule({ key: 'nt', handler: 'held', delay: 4_000, payload: { gate: 'new' } });
    release('old');
    await storyOf(h, 'nt', 2);
    release('new');
    const entries = await storyOf(h, 'nt', 4, 10_000); // deadline: the new run, 4 s on
    expect(lives(entries)).toEqual('scheduled 1, stale 1 gone, claimed 1, completed 1');
  });

  it('pause, reschedule (which resumes), resume, trigger of an interval: versions, dues, next', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'i', handler: 'work', every: '1h' });
    await h.timers.pause('i');
    const moved = await h.timers.reschedule('i', { delay: '30m' });
    expect(await h.timers.resume('i')).toMatchObject({ version: 3, status: 'pending' });
    await h.timers.trigger('i');
    await storyOf(h, 'i', 6);
    await h.timers.pause('i');
    const resumed = await h.timers.resume('i');
    const entries = await h.timers.history('i');
    expect(lives(entries)).toEqual(
      'scheduled 1, paused 2, rescheduled 3, triggered 4, claimed 4, completed 4, paused 6, resumed 7',
    );
    const byEvent = (event: string) => entries.find((entry) => entry.event === event)!;
    expect(byEvent('rescheduled').due).toBe(iso(moved.dueAt));
    expect(byEvent('claimed').due).toBe(byEvent('triggered').due);
    expect(byEvent('resumed').due).toBe(iso(resumed.dueAt));
    // the grid is anchored at the reschedule (its due, 30 min on, is off the grid): resume takes the next slot
    const grid = (k: number) => iso(moved.scheduledAt + k * 3_600_000);
    expect(iso(resumed.dueAt)).toBe(grid(1));
    const { next, counters } = await h.timers.describe('i', { count: 3 });
    expect(next.map(({ at }) => at)).toEqual([1, 2, 3].map(grid));
    expect(counters).toEqual({ ...NONE, runs: 1 });
  });

  it("next while a run goes on: a trigger run's timer still has its armed due; maxRuns counts the run once", async () => {
    const { held, release } = gates();
    const h = await backend.open({ handlers: { held } });
    const spec = { handler: 'held', maxRuns: 3, payload: { gate: 'n' } } as const;
    const hourly = await h.timers.schedule({ key: 'n:t', ...spec, every: '1h' });
    const fast = await h.timers.schedule({ key: 'n:s', ...spec, every: 1_000 });
    const at = async (key: string, from: number, unit: number) =>
      (await h.timers.next(key)).map(({ at }) => (Date.parse(at) - from) / unit);
    await h.timers.trigger('n:t');
    await h.event({ type: 'running', key: 'n:t' });
    expect(await at('n:t', hourly.scheduledAt, 3_600_000)).toEqual([1, 2]); // runs 2 and 3 of 3
    await h.event({ type: 'running', key: 'n:s' }, { within: 6_000 }); // deadline: its first run, 1 s on
    // runs 2 and 3 of 3: the next grid slots after now (a slot gone past while the run holds it is skipped)
    const fastNext = await at('n:s', fast.scheduledAt, 1_000);
    expect(fastNext).toEqual([fastNext[0], fastNext[0] + 1]);
    expect(fastNext[0]).toBeGreaterThanOrEqual(2);
    release('n');
  });

  it('history limit: every limit gives the newest entries of the whole story, describe counts over them', async () => {
    const { held, release } = gates();
    const h = await backend.open({ handlers: { held } });
    await h.timers.schedule({ key: 'l', handler: 'work', delay: 20, payload: { fail: 'boom' } });
    await storyOf(h, 'l', 3);
    await h.timers.schedule({ key: 'l', handler: 'held', delay: 20, payload: { gate: 'l' } });
    await h.event({ type: 'running', key: 'l', version: 1, id: (await h.timers.get('l'))!.id });
    const whole = await storyOf(h, 'l', 5);
    expect(lives(whole)).toEqual('scheduled 1, claimed 1, failed 1, scheduled 1, claimed 1');
    for (let limit = 1; limit <= whole.length + 1; limit += 1) {
      expect(await h.timers.history('l', { limit })).toEqual(whole.slice(0, limit));
      const { history, counters } = await h.timers.describe('l', { limit });
      expect(history).toEqual(whole.slice(0, limit));
      expect(counters).toEqual({ ...NONE, runs: 1 });
    }
    expect(await h.timers.history('l', { limit: 200 })).toEqual(whole);
    for (const limit of [201, 1.5, -1, '3' as unknown as number]) {
      await expect(h.timers.history('l', { limit })).rejects.toMatchObject({
        reason: 'invalid',
        field: 'limit',
      });
    }
    release('l');
    await storyOf(h, 'l', 6);
  });

  it('a small ledger (2 entries): the newest two of every life, never more, while a run goes on too', async () => {
    const { held, release } = gates();
    const h = await backend.open({ handlers: { held }, ledger: 2 });
    await h.timers.schedule({ key: 's', handler: 'work', delay: 20 });
    await h.until(async () => (await h.timers.history('s'))[0]?.event === 'completed', {
      what: 'a completion',
    });
    expect(lives(await h.timers.history('s'))).toEqual('claimed 1, completed 1');
    await h.timers.schedule({ key: 's', handler: 'held', delay: '1h', payload: { gate: 's' } });
    expect(lives(await h.timers.history('s'))).toEqual('completed 1, scheduled 1');
    await h.timers.trigger('s');
    const running = await h.until(async () => {
      const entries = await h.timers.history('s');
      return entries[0]?.event === 'claimed' && entries;
    });
    // the newest two: Redis's second is the run's hand-off (`armed`), the engine's the trigger
    expect(running.map(({ event }) => event)).toEqual(['claimed', name === 'redis' ? 'armed' : 'triggered']);
    expect(await h.timers.history('s', { limit: 200 })).toHaveLength(2);
    expect((await h.timers.describe('s')).history).toHaveLength(2);
    release('s');
    await h.until(async () => (await h.timers.history('s'))[0]?.event === 'completed', {
      what: 'a completion',
    });
    expect(lives(await h.timers.history('s'))).toEqual('claimed 2, completed 2');
  });
});
