/*
 * docs/spec.md §3.3–§3.3c on the engine's virtual clock, as a property of seeded random timers: every slot
 * of an hourly interval or cron is run once or counted skipped once (event `skipped`, its `due` the first
 * of `count` slots in a row) — never both, never twice, none left out — and none comes before startAt or
 * after endAt, under every catch-up, jitter and overlap policy, with handlers of random length and wakes
 * that come hours late (a stalled process); and, with pause, resume, reschedule and retries between, no slot
 * runs twice or is both run and skipped. They found the buffer-one slot that catchup 'skip' and a
 * catchupWindow passed after counting it, and the slots a run moved to a past `at` counted again or, under
 * catchup 'all', ran again.
 */
import type { Clock, TimerEvent, TimerSpec } from '@sundial/core';
import { harness, seededRandom, START } from './harness';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const SEEDS = 300;

/** The virtual clock, whose wakes come up to 5 h late one time in five. */
function stalling(random: (below: number) => number): (clock: Clock) => Clock {
  return (clock) => ({
    now: () => clock.now(),
    setTimeout: (fn, ms) => clock.setTimeout(fn, ms + (random(5) === 0 ? random(300) * MINUTE : 0)),
    clearTimeout: (handle) => clock.clearTimeout(handle),
  });
}

function randomSpec(random: (below: number) => number): TimerSpec {
  const spec: TimerSpec = random(2)
    ? { key: 'k', handler: 'work', every: '1h' }
    : { key: 'k', handler: 'work', cron: '0 * * * *', tz: 'UTC', pauseAfterFailures: 100 };
  const startAt = random(2) ? START + random(4) * HOUR + random(60) * MINUTE : undefined;
  if (startAt !== undefined) spec.startAt = startAt;
  if (random(2)) spec.endAt = (startAt ?? START) + (5 + random(20)) * HOUR;
  const policies: Array<Partial<TimerSpec>> = [
    {},
    { catchup: 'skip' },
    { catchup: 'all' },
    { catchupWindow: '2h' },
    { jitter: '5m' },
  ];
  Object.assign(spec, policies[random(policies.length)]);
  if (random(3) === 0) spec.overlap = 'buffer-one';
  return { ...spec, removeOnComplete: false };
}

/** Every slot a run (but those `asked` for: a moved run's, a retry's) or a skip names, with what named it. */
function slotsNamed(
  running: TimerEvent[],
  skipped: TimerEvent[],
  asked = new Set<number>(),
): Map<number, string[]> {
  // the slots are whole hours and a jitter is under 5 minutes: a run's slot is its due's hour
  const slotOf = (due: number) => START + Math.floor((due - START) / HOUR) * HOUR;
  const named = new Map<number, string[]>();
  const name = (slot: number, what: string) => named.set(slot, [...(named.get(slot) ?? []), what]);
  for (const run of running) if (!asked.has(run.due!)) name(slotOf(run.due!), 'ran');
  for (const event of skipped)
    for (let i = 0; i < event.count!; i++) name(event.due! + i * HOUR, event.reason!);
  return named;
}

describe('slot accounting (seeded random timers)', () => {
  it(`each slot runs or is skipped exactly once, within startAt and endAt (${SEEDS} seeds)`, async () => {
    const problems: string[] = [];
    for (let seed = 1; seed <= SEEDS; seed++) {
      const random = seededRandom(seed);
      const h = harness({ source: stalling(random) });
      const spec = randomSpec(random);
      // a cron goes on after a failure; an interval that awaits its task would end there
      const fails = spec.cron !== undefined;
      h.handlers.work = async () => {
        const ms = [0, 20, 70, 150][random(4)] * MINUTE;
        if (ms) await new Promise<void>((resolve) => h.clock.setTimeout(resolve, ms));
        if (fails && random(4) === 0) throw new Error('no');
      };
      await h.engine.schedule(spec);
      await h.clock.advance(40 * HOUR); // virtual clock
      const named = slotsNamed(h.eventsOf('running'), h.eventsOf('skipped'));
      const row = (await h.engine.get('k'))!;
      // the slot armed now (a kept one may wait behind slots already counted) is named by its wake
      if (row.status === 'pending') named.set(START + Math.floor((row.dueAt - START) / HOUR) * HOUR, []);
      const slots = [...named.keys()].sort((a, b) => a - b);
      const hour = (slot: number) => (slot - START) / HOUR;
      for (const [slot, what] of named) if (what.length > 1) problems.push(`${seed}: ${hour(slot)} ${what}`);
      for (let i = 1; i < slots.length; i++) {
        if (slots[i] - slots[i - 1] !== HOUR)
          problems.push(`${seed}: ${hour(slots[i - 1])}..${hour(slots[i])}`);
      }
      if (spec.startAt !== undefined && slots[0] < (spec.startAt as number))
        problems.push(`${seed}: startAt`);
      if (spec.endAt !== undefined && slots.at(-1)! > (spec.endAt as number)) problems.push(`${seed}: endAt`);
      await h.engine.dispose();
    }
    expect(problems).toEqual([]);
  });

  it(`with pause, resume, reschedule and retries between, no slot is named twice (${SEEDS} seeds)`, async () => {
    const problems: string[] = [];
    for (let seed = 1; seed <= SEEDS; seed++) {
      const random = seededRandom(seed);
      const h = harness({ source: stalling(random) });
      const spec = { ...randomSpec(random), every: undefined, cron: '0 * * * *', tz: 'UTC' };
      spec.pauseAfterFailures = 1 + random(4);
      if (random(4) === 0 && !spec.overlap)
        spec.retry = { attempts: 2, backoff: { type: 'fixed', delay: '10m' } };
      const asked = new Set<number>();
      h.handlers.work = async (_payload, ctx) => {
        if (ctx.attempt > 1) asked.add(ctx.due);
        const ms = [0, 20, 70, 150][random(4)] * MINUTE;
        if (ms) await new Promise<void>((resolve) => h.clock.setTimeout(resolve, ms));
        if (random(4) === 0) throw new Error('no');
      };
      await h.engine.schedule(spec);
      for (let step = 0; step < 14; step++) {
        const operation = random(6);
        // refusals (a run going on, nothing to resume) are part of the walk
        if (operation === 0) await h.engine.pause('k').catch(() => undefined);
        if (operation === 1) await h.engine.resume('k').catch(() => undefined);
        if (operation === 2) {
          // off the hour, so the run is told from the slots
          const at = h.clock.now() + (random(10) - 5) * 37 * MINUTE + 7 * MINUTE;
          if (await h.engine.reschedule('k', { at }).catch(() => null)) asked.add(at);
        }
        if (operation > 2) await h.clock.advance(random(8) * 30 * MINUTE + random(60) * 1_000); // virtual clock
      }
      await h.clock.advance(20 * HOUR); // virtual clock
      const named = slotsNamed(h.eventsOf('running'), h.eventsOf('skipped'), asked);
      const hour = (slot: number) => (slot - START) / HOUR;
      for (const [slot, what] of named) if (what.length > 1) problems.push(`${seed}: ${hour(slot)} ${what}`);
      for (const slot of named.keys()) {
        if (slot < ((spec.startAt as number) ?? -Infinity) || slot > ((spec.endAt as number) ?? Infinity))
          problems.push(`${seed}: ${hour(slot)}`);
      }
      await h.engine.dispose();
    }
    expect(problems).toEqual([]);
  });
});
