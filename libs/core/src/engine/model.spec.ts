/**
 * Random sequences of operations against a small reference model of SPEC §3 (one-shots and
 * intervals with synchronous handlers): after every step the engine's runs, answers and rows must
 * be the model's. That covers: no run before its due time, no run of a stale (id, version), each
 * (id, version) at most once, a cancelled key never runs again, runCount and last as the model says.
 */
import fc from 'fast-check';
import { SundialError } from '../errors';
import { nextGridSlot } from '../schedule';
import { harness, START } from './spec-support';

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

interface ExpectedRun {
  key: string;
  id: string;
  due: number;
  at: number;
}

class Model {
  now = START;
  lastId = 0;
  /** runs so far whose handler throws */
  failures = 0;
  readonly live = new Map<string, ModelEntry>();
  /** key → id of its cancelled timer (tombstones outlive every test sequence) */
  readonly tombstones = new Map<string, string>();

  schedule(o: Extract<Op, { op: 'schedule' }>): string | 'duplicate-key' {
    const live = this.live.get(o.key);
    if (live && o.ifExists === 'error') return 'duplicate-key';
    if (o.ifExists === 'keep') {
      const kept = live?.id ?? this.tombstones.get(o.key);
      if (kept) return kept;
    }
    const id = String(++this.lastId);
    const due = this.now + (o.delay ?? o.every!);
    this.live.set(o.key, {
      id,
      every: o.every,
      fail: o.fail,
      due,
      anchor: this.now,
      paused: false,
      runCount: 0,
      lastStarted: null,
    });
    this.tombstones.delete(o.key);
    return id;
  }

  cancel(key: string): boolean {
    const entry = this.live.get(key);
    if (!entry) return false;
    this.live.delete(key);
    this.tombstones.set(key, entry.id);
    return true;
  }

  /** Runs everything due up to now + ms, tick by tick; returns the runs in order of time. */
  advance(ms: number): ExpectedRun[] {
    const target = this.now + ms;
    const runs: ExpectedRun[] = [];
    for (;;) {
      const due = [...this.live.values()].filter((e) => !e.paused && e.due <= target).map((e) => e.due);
      if (due.length === 0) break;
      const tick = Math.min(...due);
      for (const [key, entry] of [...this.live]) {
        if (entry.paused || entry.due !== tick) continue;
        runs.push({ key, id: entry.id, due: tick, at: tick });
        entry.runCount += 1;
        entry.lastStarted = tick;
        if (entry.fail) this.failures += 1;
        if (entry.every === undefined || entry.fail) this.live.delete(key);
        else entry.due = nextGridSlot(entry.anchor, entry.every, tick);
      }
    }
    this.now = target;
    return runs;
  }
}

const key = fc.constantFrom(...KEYS);
const steps = (max: number) => fc.integer({ min: 0, max }).map((n) => n * 100);
const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    op: fc.constant('schedule' as const),
    key,
    delay: steps(30),
    fail: fc.boolean(),
    ifExists: fc.constantFrom('error' as const, 'replace' as const, 'keep' as const),
  }),
  fc.record({
    op: fc.constant('schedule' as const),
    key,
    every: steps(10).map((ms) => ms + 100),
    fail: fc.boolean(),
    ifExists: fc.constantFrom('error' as const, 'replace' as const, 'keep' as const),
  }),
  fc.record({ op: fc.constant('reschedule' as const), key, delay: steps(30) }),
  fc.record({ op: fc.constantFrom('cancel' as const, 'pause' as const, 'resume' as const), key }),
  fc.record({ op: fc.constant('cancelAll' as const), scope: fc.constantFrom(undefined, 'g:' as const) }),
  fc.record({ op: fc.constant('advance' as const), ms: steps(40) }),
);

const reasonOf = (error: unknown) => (error instanceof SundialError ? error.reason : error);
const byTimeThenKey = (a: ExpectedRun, b: ExpectedRun) => a.at - b.at || a.key.localeCompare(b.key);

async function check(ops: Op[]): Promise<void> {
  const h = harness();
  const { engine, clock } = h;
  const model = new Model();
  for (const o of ops) {
    switch (o.op) {
      case 'schedule': {
        const expected = model.schedule(o);
        const spec = {
          key: o.key,
          handler: 'work',
          ifExists: o.ifExists,
          payload: o.fail ? { fail: 'boom' } : null,
        };
        const when = o.every === undefined ? { delay: o.delay } : { every: o.every };
        const got = await engine.schedule({ ...spec, ...when }).then((t) => t.id, reasonOf);
        expect(got).toBe(expected);
        break;
      }
      case 'reschedule': {
        const entry = model.live.get(o.key);
        const got = await engine.reschedule(o.key, { delay: o.delay }).then((t) => t.id, reasonOf);
        expect(got).toBe(entry?.id ?? 'not-found');
        if (entry) {
          entry.due = model.now + o.delay;
          entry.anchor = model.now;
          entry.paused = false;
        }
        break;
      }
      case 'cancel':
        expect(await engine.cancel(o.key)).toBe(model.cancel(o.key));
        break;
      case 'cancelAll': {
        const matched = [...model.live.keys()].filter((k) => k.startsWith(o.scope ?? ''));
        for (const k of matched) model.cancel(k);
        expect(await engine.cancelAll(o.scope)).toBe(matched.length);
        break;
      }
      case 'pause':
      case 'resume': {
        const entry = model.live.get(o.key);
        const got = await engine[o.op](o.key).then((t) => t.id, reasonOf);
        expect(got).toBe(entry?.id ?? 'not-found');
        if (entry && o.op === 'pause') entry.paused = true;
        if (entry && o.op === 'resume' && entry.paused) {
          entry.paused = false;
          entry.due =
            entry.every === undefined
              ? Math.max(entry.due, model.now)
              : nextGridSlot(entry.anchor, entry.every, model.now);
        }
        break;
      }
      case 'advance': {
        const from = h.runs.length;
        await clock.advance(o.ms);
        const expected = model.advance(o.ms);
        const got = h.runs.slice(from).map(({ key, id, due, at }) => ({ key, id, due, at }));
        expect(got.sort(byTimeThenKey)).toEqual(expected.sort(byTimeThenKey));
        expect(h.eventsOf('failed')).toHaveLength(model.failures);
        break;
      }
    }
    expect(clock.now()).toBe(model.now);
    expect(await engine.snapshot()).toEqual(
      [...model.live.values()].map((e) => e.id).sort((a, b) => +a - +b),
    );
    for (const [k, entry] of model.live) {
      expect(await engine.get(k)).toMatchObject({
        id: entry.id,
        status: entry.paused ? 'paused' : 'pending',
        dueAt: entry.due,
        runCount: entry.runCount,
        last:
          entry.lastStarted === null
            ? null
            : { started: entry.lastStarted, ended: entry.lastStarted, status: 'ok' },
      });
    }
  }
  const identities = h.eventsOf('running').map((e) => `${e.id}@${e.version}`);
  expect(new Set(identities).size).toBe(identities.length);
  for (const event of h.eventsOf('running')) expect(event.at).toBeGreaterThanOrEqual(event.due!);
  await engine.dispose();
}

describe('the engine against a reference model', () => {
  it('agrees on every step of random operation sequences', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(opArbitrary, { minLength: 1, maxLength: 60, size: 'max' }), check),
      { numRuns: 200 },
    );
  });
});
