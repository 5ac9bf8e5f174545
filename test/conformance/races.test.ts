/**
 * docs/spec.md §3.5 on every backend, with seeded timing: a due timer (once or interval, its handler taking a
 * seeded while) meets cancel / replace / reschedule at a seeded moment — before the due, around the
 * claim, or during the run. Whatever the timing, once the operation has taken effect the old
 * (id, version) starts no run and records no outcome (a late completion is a stale no-op), and nothing
 * runs twice for the same (id, version). The events of one timer are ordered on both backends, so
 * "after the operation" is read from them, not from the clock.
 */
import type { TimerEvent } from '@sundial/core';
import { seededRandom } from '../engine/harness';
import { BACKENDS, type Harness, useBackend } from './backends';

/**
 * Seeds per backend; `npm run chaos` runs many more through SUNDIAL_RACE_SEEDS (`memory=1000,redis=1-100`:
 * a count runs seeds 1..n, a range `a-b` those seeds, so test/chaos/races.ts can split the Redis seeds
 * over processes running side by side).
 */
const SEEDS: Record<string, number[]> = {
  memory: seedRange('24'),
  redis: seedRange('6'),
  ...Object.fromEntries(
    (process.env.SUNDIAL_RACE_SEEDS ?? '')
      .split(',')
      .filter((pair) => pair.includes('='))
      .map((pair) => [pair.split('=')[0].trim(), seedRange(pair.split('=')[1])]),
  ),
};

/** `n` → 1..n; `a-b` → a..b. */
function seedRange(text: string): number[] {
  const [from, to] = text.includes('-') ? text.split('-').map(Number) : [1, Number(text)];
  return Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);
}
const OUTCOMES = ['running', 'completed', 'failed', 'skipped'];

/** The events of `id` after the first one matching `mark` (which must have come). */
async function eventsAfter(h: Harness, mark: Partial<TimerEvent>, id: string): Promise<TimerEvent[]> {
  const marker = await h.event(mark);
  return h.events.slice(h.events.indexOf(marker) + 1).filter((event) => event.id === id);
}

function expectSoundRuns(h: Harness): void {
  for (const run of h.runs) expect(run.at).toBeGreaterThanOrEqual(run.due);
  const identities = h.runs.map((run) => `${run.id}@${run.version}`);
  expect(new Set(identities).size).toBe(identities.length);
}

describe.each(BACKENDS)('%s backend: races with seeded timing', (name) => {
  const backend = useBackend(name);
  const seeds = SEEDS[name];

  describe.each(['once', 'interval'] as const)('a %s timer', (kind) => {
    async function start(seed: number) {
      const random = seededRandom(seed * 7 + kind.length);
      const h = await backend.open();
      const delay = 20 + random(80);
      const when = kind === 'once' ? { delay } : { every: 100 + delay };
      const old = await h.timers.schedule({
        key: 'k',
        handler: 'work',
        ...when,
        payload: { sleepMs: random(150) },
      });
      await h.pass(random(delay + 150));
      return { h, old };
    }

    it.each(seeds)('cancel, seed %i: the old entry is silent after it, and stays cancelled', async (seed) => {
      const { h, old } = await start(seed);
      if (!(await h.timers.cancel('k'))) {
        // too late: the one-shot had run and gone, so there was nothing to cancel
        expect([kind, await h.timers.get('k')]).toEqual(['once', null]);
        await h.event({ type: 'completed', id: old.id });
        return expectSoundRuns(h);
      }
      await h.pass(400);
      expect(
        (await eventsAfter(h, { type: 'cancelled', id: old.id }, old.id)).filter((e) =>
          OUTCOMES.includes(e.type),
        ),
      ).toEqual([]);
      expectSoundRuns(h);
      expect(await h.timers.get('k')).toBeNull();
      expect(await h.timers.check(old.id)).toBe(false);
      expect(
        await h.timers.schedule({ key: 'k', handler: 'work', delay: 1, ifExists: 'keep' }),
      ).toMatchObject({
        id: old.id,
        status: 'cancelled',
      });
    });

    it.each(seeds)(
      'replace, seed %i: the old entry is silent and the new one runs once, untouched',
      async (seed) => {
        const { h, old } = await start(seed);
        const fresh = await h.timers.schedule({
          key: 'k',
          handler: 'work',
          delay: 50,
          ifExists: 'replace',
          removeOnComplete: false,
        });
        await h.event({ type: 'completed', id: fresh.id });
        await h.pass(300);
        // the old entry may have finished before the replace; if it was live, it was cancelled as replaced
        const cancelled = h.events.find((e) => e.type === 'cancelled' && e.id === old.id);
        if (cancelled) {
          expect(cancelled.reason).toBe('replaced');
          expect(
            (await eventsAfter(h, { type: 'cancelled', id: old.id }, old.id)).filter((e) =>
              OUTCOMES.includes(e.type),
            ),
          ).toEqual([]);
        } else expect(kind).toBe('once');
        expectSoundRuns(h);
        expect(h.runs.filter((run) => run.id === fresh.id).map((run) => [run.version, run.due])).toEqual([
          [1, fresh.dueAt],
        ]);
        const row = await h.timers.get('k');
        expect(row).toMatchObject({ id: fresh.id, status: 'completed', runCount: 1, last: { status: 'ok' } });
        expect(
          h.events
            .filter((e) => e.id === fresh.id && ['completed', 'failed'].includes(e.type))
            .map((e) => e.type),
        ).toEqual(['completed']);
      },
    );

    it.each(seeds)(
      'reschedule, seed %i: refused while running, else only the new version runs after it',
      async (seed) => {
        const { h, old } = await start(seed);
        const moved = await h.timers.reschedule('k', { delay: 200 }).catch((error: Error) => error);
        if (moved instanceof Error) {
          // a run held the timer (or the one-shot had run and gone): nothing changed
          expect(['inactive', 'not-found']).toContain((moved as { reason?: string }).reason);
          if ((moved as { reason?: string }).reason === 'inactive')
            await h.event({ type: 'completed', id: old.id });
          expectSoundRuns(h);
          return;
        }
        expect(moved).toMatchObject({ id: old.id, dueAt: moved.scheduledAt + 200 });
        await h.event({ type: 'running', id: old.id, version: moved.version });
        const later = await eventsAfter(h, { type: 'scheduled', id: old.id, version: moved.version }, old.id);
        for (const event of later.filter((e) => OUTCOMES.includes(e.type))) {
          expect(event.version).toBeGreaterThanOrEqual(moved.version);
        }
        // the run itself starts once the claim's answer is back (Redis: its `running` event may come first)
        expect(await h.started({ id: old.id, version: moved.version })).toMatchObject({ due: moved.dueAt });
        expectSoundRuns(h);
      },
    );
  });
});
