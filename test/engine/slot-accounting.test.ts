/*
 * docs/spec.md §3.3–§3.3c on the engine's virtual clock, as a property of seeded random timers: every slot
 * of an hourly interval or cron is run once or counted skipped once (event `skipped`, its `due` the first
 * of `count` slots in a row) — never both, never twice, none left out — and none comes before startAt or
 * after endAt, under every catch-up, jitter and overlap policy, with handlers of random length and wakes
 * that come hours late (a stalled process). It found the buffer-one slot that catchup 'skip' and a
 * catchupWindow passed after counting it, or counted twice.
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

/** Every slot a run or a skip names, with what named it. */
function slotsNamed(running: TimerEvent[], skipped: TimerEvent[]): Map<number, string[]> {
  // the slots are whole hours and a jitter is under 5 minutes: a run's slot is its due's hour
  const slotOf = (due: number) => START + Math.floor((due - START) / HOUR) * HOUR;
  const named = new Map<number, string[]>();
  const name = (slot: number, what: string) => named.set(slot, [...(named.get(slot) ?? []), what]);
  for (const run of running) name(slotOf(run.due!), 'ran');
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
});
