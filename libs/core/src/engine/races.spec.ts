/**
 * docs/spec.md §3.5, in process: every race where a stale execution could touch a newer entry, each run
 * under many seeded timings. The time source cannot cancel (every wake still arrives, sometimes
 * twice), which is both the injected-source contract and the real clock's unclosable window: a
 * callback already queued when clearTimeout runs. Whatever the timing, the stale execution must
 * close, fail, remove or re-arm nothing.
 */
import type { Timer } from '../types';
import {
  harness,
  seededRandom,
  uncancellable,
  type Harness,
  type RunRecord,
} from '../../../../test/engine/harness';

const SEEDS = Array.from({ length: 24 }, (_, i) => i + 1);

/** Where the operation lands relative to the timer's wake and run; the seed picks one and the numbers. */
const PHASES = ['before-due', 'same-tick-op-first', 'same-tick-wake-first', 'during-run'] as const;
type Phase = (typeof PHASES)[number];

interface Scenario {
  h: Harness;
  old: Timer;
  phase: Phase;
  delay: number;
  sleepMs: number;
  /** filled in when the operation runs */
  at: { time: number; runs: number; events: number } | null;
}

/** Schedules `k` and, at a seeded moment, runs `op`; then lets a long stretch of time pass. */
async function race(
  seed: number,
  kind: 'once' | 'interval',
  op: (s: Scenario) => Promise<unknown>,
): Promise<Scenario> {
  const random = seededRandom(seed);
  const h = harness({ source: (clock) => uncancellable(clock, { twice: random(2) === 1 }) });
  const phase = PHASES[seed % PHASES.length];
  const delay = 100 + random(900);
  const sleepMs = phase === 'during-run' ? 2 + random(2_000) : random(2) * random(2_000);
  const opAt = {
    'before-due': random(delay),
    'same-tick-op-first': delay,
    'same-tick-wake-first': delay,
    'during-run': delay + 1 + random(sleepMs - 1),
  }[phase];
  const scenario: Scenario = { h, old: undefined as unknown as Timer, phase, delay, sleepMs, at: null };
  const fireOp = () => {
    scenario.at = { time: h.clock.now(), runs: h.runs.length, events: h.events.length };
    op(scenario).catch((error: unknown) => {
      throw error;
    });
  };
  // Arming order decides which of two callbacks due in the same tick runs first.
  if (phase !== 'same-tick-wake-first') h.clock.setTimeout(fireOp, opAt);
  const when = kind === 'once' ? { delay } : { every: delay };
  scenario.old = await h.engine.schedule({ key: 'k', handler: 'work', ...when, payload: { sleepMs } });
  if (phase === 'same-tick-wake-first') h.clock.setTimeout(fireOp, opAt);
  await h.clock.advance(20 * delay + 5_000);
  expect(scenario.at).not.toBeNull();
  return scenario;
}

/** Invariants of every run, whatever happened: never early, and each (id, version) at most once. */
function expectSoundRuns(runs: RunRecord[]): void {
  for (const run of runs) expect(run.at).toBeGreaterThanOrEqual(run.due);
  const identities = runs.map((run) => `${run.id}@${run.version}`);
  expect(new Set(identities).size).toBe(identities.length);
}

function after(s: Scenario) {
  const { runs, events } = s.h;
  return { runs: runs.slice(s.at!.runs), events: events.slice(s.at!.events) };
}

/** Nothing the old entry did after the operation reached the outside: no run, no outcome, no re-arm. */
function expectOldSilent(s: Scenario): void {
  const later = after(s);
  expect(later.runs.filter((run) => run.id === s.old.id)).toEqual([]);
  expect(
    later.events.filter(
      (e) => e.id === s.old.id && ['running', 'completed', 'failed', 'skipped'].includes(e.type),
    ),
  ).toEqual([]);
}

/** A run of the old entry still in flight at the operation (started, not settled) saw its signal abort. */
function expectInFlightAborted(s: Scenario): void {
  const { runs, events } = s.h;
  const settled = events
    .slice(0, s.at!.events)
    .filter((e) => e.id === s.old.id && (e.type === 'completed' || e.type === 'failed'))
    .map((e) => e.version);
  const inFlight = runs
    .slice(0, s.at!.runs)
    .filter((run) => run.id === s.old.id && !settled.includes(run.version));
  if (s.phase === 'during-run' || s.phase === 'same-tick-wake-first')
    expect(inFlight.length).toBeGreaterThan(0);
  for (const run of inFlight) expect(run.signal.aborted).toBe(true);
}

describe.each(['once', 'interval'] as const)('races of a %s timer', (kind) => {
  describe('timeout fires while cancel() is called / async task completes after cancel()', () => {
    it.each(SEEDS)('seed %i', async (seed) => {
      const s = await race(seed, kind, ({ h }) => h.engine.cancel('k'));
      expectOldSilent(s);
      expectInFlightAborted(s);
      expectSoundRuns(s.h.runs);
      expect(await s.h.engine.get('k')).toBeNull();
      expect(await s.h.engine.check(s.old.id)).toBe(false);
      expect(
        await s.h.engine.schedule({ key: 'k', handler: 'work', delay: 1, ifExists: 'keep' }),
      ).toMatchObject({
        id: s.old.id,
        status: 'cancelled',
      });
    });
  });

  describe('timeout fires while replace is called / async task completes after replace', () => {
    it.each(SEEDS)('seed %i', async (seed) => {
      let fresh: Timer | undefined;
      const s = await race(seed, kind, async ({ h, delay }) => {
        fresh = await h.engine.schedule({
          key: 'k',
          handler: 'work',
          delay: delay / 2,
          ifExists: 'replace',
          removeOnComplete: false,
        });
      });
      expectOldSilent(s);
      expectInFlightAborted(s);
      expectSoundRuns(s.h.runs);
      const freshRuns = s.h.runs.filter((run) => run.id === fresh!.id);
      expect(freshRuns.map((run) => [run.version, run.due])).toEqual([[1, fresh!.dueAt]]);
      // the stale run's completion did not close, fail or re-arm the new entry: its record is its own
      expect(await s.h.engine.get('k')).toMatchObject({
        id: fresh!.id,
        status: 'completed',
        runCount: 1,
        last: { started: fresh!.dueAt, ended: fresh!.dueAt, status: 'ok' },
      });
      const freshOutcomes = s.h.events.filter(
        (e) => e.id === fresh!.id && ['completed', 'failed'].includes(e.type),
      );
      expect(freshOutcomes.map((e) => e.type)).toEqual(['completed']);
    });
  });

  describe('timeout fires while reschedule() is called', () => {
    it.each(SEEDS)('seed %i', async (seed) => {
      let outcome: Timer | Error | undefined;
      let before: Timer | null = null;
      const s = await race(seed, kind, async ({ h, delay }) => {
        // both calls start in the same synchronous step, so nothing runs between them
        const reading = h.engine.get('k');
        const moving = h.engine.reschedule('k', { delay: 3 * delay });
        before = await reading;
        outcome = await moving.catch((error: Error) => error);
      });
      expectSoundRuns(s.h.runs);
      const later = after(s).runs;
      if (outcome instanceof Error) {
        // refused while the run held the timer: it changed nothing and the run closes normally
        expect(outcome).toMatchObject({ reason: 'inactive' });
        expect(before).toMatchObject({ status: 'running' });
        expect(s.h.events.filter((e) => e.id === s.old.id && e.type === 'completed').length).toBeGreaterThan(
          0,
        );
        return;
      }
      const moved = outcome!;
      expect(moved).toMatchObject({
        id: s.old.id,
        version: before!.version + 1,
        dueAt: s.at!.time + 3 * s.delay,
      });
      // no wake armed before the reschedule runs afterwards, and the new due is kept
      for (const run of later) expect(run.version).toBeGreaterThanOrEqual(moved.version);
      expect(later[0]).toMatchObject({ version: moved.version, due: moved.dueAt, at: moved.dueAt });
      if (kind === 'once') expect(later).toHaveLength(1);
    });
  });
});

describe('interval task completes after dispose()', () => {
  it.each(SEEDS)('seed %i', async (seed) => {
    const s = await race(seed, 'interval', ({ h }) => h.engine.dispose());
    expect(after(s).runs).toEqual([]);
    // dispose emitted cancelled + disposed, then cleared its listeners: nothing after
    expect(after(s).events.map((e) => e.type)).toEqual(['cancelled', 'disposed']);
    expectInFlightAborted(s);
    expectSoundRuns(s.h.runs);
    await expect(s.h.engine.get('k')).rejects.toMatchObject({ reason: 'disposed' });
  });
});

describe('duplicate wakes', () => {
  it('a wake that comes twice runs its (id, version) once and reports the second as stale', async () => {
    const h = harness({ source: (clock) => uncancellable(clock, { twice: true }) });
    await h.engine.schedule({ key: 'i', handler: 'work', every: '1s' });
    await h.clock.advance('5s');
    expect(h.runs.map((run) => run.version)).toEqual([1, 2, 3, 4, 5]);
    expect(h.eventsOf('stale').map((e) => [e.version, e.reason])).toEqual([
      [1, 'status'],
      [2, 'status'],
      [3, 'status'],
      [4, 'status'],
      [5, 'status'],
    ]);
  });

  it('a wake for an entry that is gone is reported stale with reason gone', async () => {
    const h = harness({ source: (clock) => uncancellable(clock) });
    await h.engine.schedule({ key: 'k', handler: 'work', delay: 10 });
    await h.engine.cancel('k');
    await h.clock.advance(10);
    expect(h.runs).toEqual([]);
    expect(h.eventsOf('stale')).toEqual([
      expect.objectContaining({ id: '1', version: 1, kind: null, reason: 'gone' }),
    ]);
  });
});
