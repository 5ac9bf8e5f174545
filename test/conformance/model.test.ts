/**
 * Random sequences of operations against a small reference model of docs/spec.md §3 (one-shots and intervals
 * with synchronous handlers), on every backend: after every step the backend's runs, answers and rows
 * must be the model's. That covers: no run before its due time, no run of a stale (id, version), each
 * (id, version) at most once, a cancelled key never runs again, runCount and last as the model says.
 *
 * On the engine time is virtual and every run happens exactly at its due. On Redis time is real: the
 * sequences are shorter, intervals longer, and before each operation the model waits until no run is
 * due within MARGIN of now — so an operation never races a run and the outcome is not a matter of
 * timing — taking each run's start and settle times from the backend (they must still be on the model's
 * due, never early).
 */
import { nextGridSlot, SundialError, type Timer } from '@sundial/core';
import fc from 'fast-check';
import { BACKENDS, type BackendName, type Harness, useBackend } from './backends';

const KEYS = ['a', 'b', 'g:a', 'g:b'] as const;
type Key = (typeof KEYS)[number];

type Op =
  | {
      op: 'schedule';
      key: Key;
      delay?: number;
      every?: number;
      fail: boolean;
      ifExists: 'error' | 'replace' | 'keep';
    }
  | { op: 'reschedule'; key: Key; delay: number }
  | { op: 'cancel' | 'pause' | 'resume'; key: Key }
  | { op: 'cancelAll'; scope?: 'g:' }
  | { op: 'advance'; ms: number };

/** How each backend is exercised: sequence count and length, the time unit, and the quiet margin. */
const PROFILES: Record<
  BackendName,
  { runs: number; maxLength: number; unit: number; minEvery: number; margin: number }
> = {
  memory: { runs: 150, maxLength: 60, unit: 100, minEvery: 100, margin: 0 },
  redis: { runs: 25, maxLength: 10, unit: 50, minEvery: 600, margin: 250 },
};

interface ModelEntry {
  id: string;
  every?: number;
  fail: boolean;
  due: number;
  anchor: number;
  paused: boolean;
  runCount: number;
  lastStarted: number | null;
}

class Model {
  /** runs so far, and how many of them threw */
  runs = 0;
  failures = 0;
  readonly ids = new Set<string>();
  /** the backend's runs the model has accounted for */
  readonly taken = new Set<object>();
  readonly live = new Map<string, ModelEntry>();
  /** key → id of its cancelled timer (tombstones outlive every test sequence) */
  readonly tombstones = new Map<string, string>();

  /** What schedule must answer: a refusal, the id it keeps, or a fresh id. */
  expectSchedule(o: Extract<Op, { op: 'schedule' }>): 'duplicate-key' | { kept: string } | 'fresh' {
    const live = this.live.get(o.key);
    if (live && o.ifExists === 'error') return 'duplicate-key';
    const kept = o.ifExists === 'keep' ? (live?.id ?? this.tombstones.get(o.key)) : undefined;
    return kept ? { kept } : 'fresh';
  }

  created(key: string, o: Extract<Op, { op: 'schedule' }>, timer: Timer): void {
    this.ids.add(timer.id);
    this.tombstones.delete(key);
    this.live.set(key, {
      id: timer.id,
      every: o.every,
      fail: o.fail,
      due: timer.dueAt,
      anchor: timer.scheduledAt,
      paused: false,
      runCount: 0,
      lastStarted: null,
    });
  }

  cancel(key: string): boolean {
    const entry = this.live.get(key);
    if (!entry) return false;
    this.live.delete(key);
    this.tombstones.set(key, entry.id);
    return true;
  }

  /** The live entry that runs next, if any. */
  next(): [string, ModelEntry] | undefined {
    let first: [string, ModelEntry] | undefined;
    for (const pair of this.live) if (!pair[1].paused && (!first || pair[1].due < first[1].due)) first = pair;
    return first;
  }

  ran(key: string, entry: ModelEntry, started: number, settled: number): void {
    this.runs += 1;
    entry.runCount += 1;
    entry.lastStarted = started;
    if (entry.fail) this.failures += 1;
    if (entry.every === undefined || entry.fail) this.live.delete(key);
    else entry.due = nextGridSlot(entry.anchor, entry.every, settled);
  }
}

const reasonOf = (error: unknown): string =>
  error instanceof SundialError ? error.reason : `unexpected ${String(error)}`;

function operations(name: BackendName): fc.Arbitrary<Op> {
  const { unit, minEvery } = PROFILES[name];
  const key = fc.constantFrom(...KEYS);
  const steps = (max: number) => fc.integer({ min: 0, max }).map((n) => n * unit);
  const ifExists = fc.constantFrom('error' as const, 'replace' as const, 'keep' as const);
  return fc.oneof(
    fc.record({ op: fc.constant('schedule' as const), key, delay: steps(30), fail: fc.boolean(), ifExists }),
    fc.record({
      op: fc.constant('schedule' as const),
      key,
      every: steps(10).map((ms) => ms + minEvery),
      fail: fc.boolean(),
      ifExists,
    }),
    fc.record({ op: fc.constant('reschedule' as const), key, delay: steps(30) }),
    fc.record({ op: fc.constantFrom('cancel' as const, 'pause' as const, 'resume' as const), key }),
    fc.record({ op: fc.constant('cancelAll' as const), scope: fc.constantFrom(undefined, 'g:' as const) }),
    fc.record({ op: fc.constant('advance' as const), ms: steps(40) }),
  );
}

/**
 * Lets every run due within `margin` of now happen, checking each against the model (its due, never
 * early, at once on the engine) and applying it; returns the backend's now once no run is that close.
 */
async function settle(h: Harness, model: Model, margin: number): Promise<number> {
  for (;;) {
    const now = await h.now();
    const next = model.next();
    if (!next || next[1].due > now + margin) {
      expect(h.runs).toHaveLength(model.runs);
      return now;
    }
    const [key, entry] = next;
    // Not a run already taken: a reschedule can put the next due on the time of the last run.
    const run = await h.until(
      () => h.runs.find((r) => !model.taken.has(r) && r.id === entry.id && r.due === entry.due),
      {
        what: `the run of ${key} due at ${entry.due}`,
      },
    );
    const outcome = await h.event({
      type: entry.fail ? 'failed' : 'completed',
      id: entry.id,
      version: run.version,
    });
    if (h.backend === 'memory') expect(run.at).toBe(run.due);
    expect(run.at).toBeGreaterThanOrEqual(run.due);
    model.taken.add(run);
    model.ran(key, entry, run.at, outcome.at);
  }
}

async function check(h: Harness, ops: Op[]): Promise<void> {
  const model = new Model();
  const { margin } = PROFILES[h.backend];
  for (const o of ops) {
    const before = await settle(h, model, margin);
    switch (o.op) {
      case 'schedule': {
        const expected = model.expectSchedule(o);
        const when = o.every === undefined ? { delay: o.delay } : { every: o.every };
        const payload = o.fail ? { fail: 'boom' } : null;
        const got = await h.timers
          .schedule({ key: o.key, handler: 'work', ifExists: o.ifExists, payload, ...when })
          .catch(reasonOf);
        if (expected === 'duplicate-key' || typeof got === 'string') expect(got).toBe(expected);
        else if (expected === 'fresh') {
          expect(model.ids.has(got.id)).toBe(false);
          expect(got.scheduledAt).toBeGreaterThanOrEqual(before);
          expect(got.dueAt).toBe(got.scheduledAt + (o.delay ?? o.every!));
          if (model.live.has(o.key)) model.cancel(o.key);
          model.created(o.key, o, got);
        } else expect(got.id).toBe(expected.kept);
        break;
      }
      case 'reschedule': {
        const entry = model.live.get(o.key);
        const got = await h.timers.reschedule(o.key, { delay: o.delay }).catch(reasonOf);
        if (!entry) expect(got).toBe('not-found');
        else {
          expect(got).toMatchObject({ id: entry.id });
          const moved = got as Timer;
          expect(moved.scheduledAt).toBeGreaterThanOrEqual(before);
          expect(moved.dueAt).toBe(moved.scheduledAt + o.delay);
          Object.assign(entry, { due: moved.dueAt, anchor: moved.scheduledAt, paused: false });
        }
        break;
      }
      case 'cancel':
        expect(await h.timers.cancel(o.key)).toBe(model.cancel(o.key));
        break;
      case 'cancelAll': {
        const matched = [...model.live.keys()].filter((k) => k.startsWith(o.scope ?? ''));
        for (const k of matched) model.cancel(k);
        expect(await h.timers.cancelAll(o.scope)).toBe(matched.length);
        break;
      }
      case 'pause':
      case 'resume': {
        const entry = model.live.get(o.key);
        const got = await h.timers[o.op](o.key).catch(reasonOf);
        if (!entry) {
          expect(got).toBe('not-found');
          break;
        }
        expect(got).toMatchObject({ id: entry.id });
        if (o.op === 'pause') entry.paused = true;
        else if (entry.paused) {
          const after = await h.now();
          const due = (got as Timer).dueAt;
          // the next due after the resume, taken at some instant between `before` and `after`
          if (entry.every === undefined) {
            if (entry.due >= before) expect(due).toBe(entry.due);
            else expect([due >= before, due <= after]).toEqual([true, true]);
          } else {
            expect((due - entry.anchor) % entry.every).toBe(0);
            expect([due > before, due <= after + entry.every]).toEqual([true, true]);
          }
          Object.assign(entry, { paused: false, due });
        }
        break;
      }
      case 'advance':
        await h.pass(o.ms);
        break;
    }
    if (o.op === 'advance') continue;
    expect((await h.timers.snapshot()).sort()).toEqual([...model.live.values()].map((e) => e.id).sort());
    for (const [k, entry] of model.live) {
      expect(await h.timers.get(k)).toMatchObject({
        id: entry.id,
        status: entry.paused ? 'paused' : 'pending',
        dueAt: entry.due,
        runCount: entry.runCount,
        last: entry.lastStarted === null ? null : { started: entry.lastStarted, status: 'ok' },
      });
    }
  }
  await settle(h, model, margin);
  expect(h.eventsOf('failed')).toHaveLength(model.failures);
  const identities = h.runs.map((run) => `${run.id}@${run.version}`);
  expect(new Set(identities).size).toBe(identities.length);
}

describe.each(BACKENDS)('%s backend: against a reference model', (name) => {
  const backend = useBackend(name);
  const { runs, maxLength } = PROFILES[name];

  it(`agrees on every step of ${runs} random operation sequences`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(operations(name), { minLength: 1, maxLength, size: 'max' }), async (ops) => {
        const h = await backend.open();
        try {
          await check(h, ops);
        } finally {
          await h.timers.dispose();
        }
      }),
      { numRuns: runs },
    );
  }, 600_000);
});
