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
 * due, never early). The check after an operation still races the timers due by its end (one the
 * operation made due at once, or any if the check is slow): see `compare`.
 */
import { SundialError, type Timer } from '@sundial/core';
import fc from 'fast-check';
import { BACKENDS, type BackendName, type Harness, type RunRecord, useBackend } from './backends';
import { KEYS, Model, type ModelEntry, type Op } from './reference-model';

/**
 * How each backend is exercised: sequence count and length, the time unit, and the quiet margin; and in
 * how many streams side by side (`it.concurrent`, each sequence on a harness of its own) the sequences
 * run. On Redis a sequence mostly waits on real time; the engine's compute.
 */
const PROFILES: Record<
  BackendName,
  { runs: number; streams: number; maxLength: number; unit: number; minEvery: number; margin: number }
> = {
  memory: { runs: 150, streams: 1, maxLength: 60, unit: 100, minEvery: 100, margin: 0 },
  redis: { runs: 25, streams: 2, maxLength: 10, unit: 50, minEvery: 600, margin: 250 },
};

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

/** The row a live model entry shows between runs (the version is not modelled: it is checked around runs). */
function between(entry: ModelEntry): Partial<Timer> {
  return {
    id: entry.id,
    status: entry.paused ? 'paused' : 'pending',
    dueAt: entry.due,
    runCount: entry.runCount,
    last: entry.lastStarted === null ? null : { started: entry.lastStarted, status: 'ok' },
  };
}

/**
 * Lets every run the model has due at or before `until` happen, in due order, checking each against the
 * model (its due, never early, at once on the engine) and applying it; `ran` hears of each once applied.
 * Returns how many ran.
 */
async function runDue(
  h: Harness,
  model: Model,
  until: number,
  ran?: (key: string, entry: ModelEntry, run: RunRecord) => void,
): Promise<number> {
  let count = 0;
  for (let next = model.next(); next && next[1].due <= until; next = model.next()) {
    const [key, entry] = next;
    count += 1;
    // Not a run already taken: a reschedule can put the next due on the time of the last run.
    const run = await h.until(
      () => h.runs.find((r) => !model.taken.has(r) && r.id === entry.id && r.due === entry.due),
      { what: `the run of ${key} due at ${entry.due}` },
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
    ran?.(key, entry, run);
  }
  return count;
}

/** Lets every run due within `margin` of now happen (see `runDue`); returns the backend's now once no run is that close. */
async function settle(h: Harness, model: Model, margin: number): Promise<number> {
  for (;;) {
    const now = await h.now();
    if ((await runDue(h, model, now + margin)) === 0) {
      expect(h.runs).toHaveLength(model.runs);
      return now;
    }
  }
}

/**
 * Compares the backend's timers with the model. A timer not due by the end of the reads (by the
 * backend's clock, which also gates claims) must show exactly the model's row. One due by then may have
 * been claimed, or have run, while they went on (on Redis time is real): its runs are awaited and applied
 * to the model, and its row must be one of the states the spec lets it pass through — as before the run;
 * running (status `running`, `runCount` + 1, `last` = the claim, same due and version); after it
 * (re-armed one version on, or removed) — the one its `runCount` and status name.
 */
async function compare(h: Harness, model: Model): Promise<void> {
  const snapshot = await h.timers.snapshot();
  const rows = new Map<string, Timer | null>();
  for (const key of model.live.keys()) rows.set(key, await h.timers.get(key));
  const readsEnd = await h.now();
  const entries = [...model.live];
  const firstRunCount = new Map(entries.map(([key, entry]) => [key, entry.runCount]));
  /** key → its rows since the reads began: between runs, then running and after, for each run */
  const states = new Map(entries.map(([key, entry]) => [key, [between(entry)] as (Partial<Timer> | null)[]]));
  await runDue(h, model, readsEnd, (key, entry, run) => {
    states.get(key)!.push(
      {
        id: entry.id,
        status: 'running',
        dueAt: run.due,
        version: run.version,
        runCount: entry.runCount,
        last: { started: entry.lastStarted!, status: 'running' },
      },
      model.live.get(key) === entry ? { ...between(entry), version: run.version + 1 } : null,
    );
  });
  // Absent from the snapshot only if a run removed it; the gets came later, so they find it gone too.
  const removed = ([key]: [string, ModelEntry]) => states.get(key)!.at(-1) === null;
  const expected = entries.filter((pair) => snapshot.includes(pair[1].id) || !removed(pair));
  expect(snapshot.sort()).toEqual(expected.map(([, entry]) => entry.id).sort());
  for (const [key, entry] of entries) {
    const row = rows.get(key)!;
    const seen = states.get(key)!;
    if (!snapshot.includes(entry.id) || row === null) {
      expect({ key, row }).toEqual({ key, row: seen.at(-1) });
      continue;
    }
    const runs = row.runCount - firstRunCount.get(key)!;
    const state = seen[row.status === 'running' ? 2 * runs - 1 : 2 * runs] ?? seen[0];
    if (state === null) expect({ key, row }).toEqual({ key, row: null });
    else expect(row).toMatchObject(state);
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
    if (o.op !== 'advance') await compare(h, model);
  }
  await settle(h, model, margin);
  expect(h.eventsOf('failed')).toHaveLength(model.failures);
  const identities = h.runs.map((run) => `${run.id}@${run.version}`);
  expect(new Set(identities).size).toBe(identities.length);
}

describe.each(BACKENDS)('%s backend: against a reference model', (name) => {
  const backend = useBackend(name);
  const { runs, streams, maxLength } = PROFILES[name];
  // Each stream its share of the sequences, drawn from a seed of its own (fast-check's, per assert).
  const shares = Array.from({ length: streams }, (_, n) => [n + 1, Math.ceil((runs - n) / streams)]);

  it.concurrent.each(shares)(
    `agrees on every step of ${runs} random operation sequences (stream %i: %i)`,
    async (_, share) => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(operations(name), { minLength: 1, maxLength, size: 'max' }),
          async (ops) => {
            const h = await backend.open();
            try {
              await check(h, ops);
            } finally {
              await h.close();
            }
          },
        ),
        { numRuns: share },
      );
    },
    600_000,
  );
});
