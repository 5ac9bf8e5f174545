import type { Clock } from './clock';
import { createEngine } from './engine';
import type { TimerSpec } from './types';
import { VirtualClock } from './virtual-clock';

const START = Date.parse('2027-03-01T00:00:00Z');
const HOUR = 3_600_000;

/**
 * An engine whose wakes are held while its clock moves (a process stalled, or a cluster down): its
 * timers' slots go past unrun. `release` lets the held wakes come, as they do when it is back.
 */
function stalled() {
  const clock = new VirtualClock(START);
  let held: (() => void)[] | null = [];
  const source: Clock = {
    now: () => clock.now(),
    setTimeout: (fn, ms) => clock.setTimeout(() => (held ? held.push(fn) : fn()), ms),
    clearTimeout: (handle) => clock.clearTimeout(handle),
  };
  const dues: number[] = [];
  const timers = createEngine({ clock: source, handlers: { h: (_payload, ctx) => void dues.push(ctx.due) } });
  const release = async () => {
    const wakes = held ?? [];
    held = null;
    for (const wake of wakes) wake();
    await clock.advance(0);
  };
  return { clock, timers, dues, release };
}

/**
 * next (docs/spec.md §3.9) of a timer whose slots went past unrun lists what will in fact run once its
 * wake comes (§3.3, §3.3c): a late slot runs (catchup 'once'), then the first slot after now — not the
 * slots gone past; catchup 'skip' and a catchupWindow pass the late slot for the one they arm; 'all' runs
 * each slot in turn.
 */
describe('next of a timer whose slots went past unrun', () => {
  it.each<[string, Partial<TimerSpec>, number[]]>([
    ['once (default): the late slot, then after now', {}, [1, 4, 5]],
    ['skip: the first slot after now', { catchup: 'skip' }, [4, 5, 6]],
    ['a 90 min window: the first slot inside it, then after now', { catchupWindow: '90m' }, [2, 4, 5]],
    ['all: every slot in turn', { catchup: 'all' }, [1, 2, 3, 4]],
    ['a cron, skip', { every: undefined, cron: '0 * * * *', tz: 'UTC', catchup: 'skip' }, [4, 5, 6]],
  ])('%s', async (_name, policy, hours) => {
    const { clock, timers, dues, release } = stalled();
    await timers.schedule({ key: 'k', handler: 'h', every: '1h', ...policy } as TimerSpec);
    await clock.advance(3.5 * HOUR);
    const next = await timers.next('k', { count: hours.length });
    expect(next.map((time) => (Date.parse(time.at) - START) / HOUR)).toEqual(hours);
    // what runs once the wakes come
    await release();
    await clock.advance(hours[hours.length - 1] * HOUR - clock.now() + START);
    expect(dues.map((due) => (due - START) / HOUR)).toEqual(hours);
  });
});

/** next of a timer whose run goes on past its next slots (§3.3a): they are skipped, or the first one kept. */
describe('next while a run goes on past the next slots', () => {
  it.each<[string, TimerSpec['overlap'], number[]]>([
    ['skip: the first slot after now', 'skip', [4, 5]],
    ['buffer-one: the first slot that came meanwhile, then after now', 'buffer-one', [2, 4]],
  ])('%s', async (_name, overlap, hours) => {
    const clock = new VirtualClock(START);
    const dues: number[] = [];
    // each run takes 2.5 h of the virtual clock
    const slow = (_payload: unknown, ctx: { due: number }) => {
      dues.push(ctx.due);
      return new Promise<void>((resolve) => clock.setTimeout(resolve, 2.5 * HOUR));
    };
    const timers = createEngine({ clock, handlers: { h: slow } });
    await timers.schedule({ key: 'k', handler: 'h', every: '1h', overlap });
    await clock.advance(3.4 * HOUR); // virtual clock: the first run, from 1 h, goes on
    const next = await timers.next('k', { count: 2 });
    expect(next.map((time) => (Date.parse(time.at) - START) / HOUR)).toEqual(hours);
    // the run after it is the first one listed (the runs are long: the one after that comes later)
    await clock.advance(4 * HOUR - clock.now() + START);
    expect(dues.map((due) => (due - START) / HOUR)).toEqual([1, hours[0]]);
  });
});

/*
 * A cron's jitter longer than the gap between its slots is refused on a new spec (§3.3c): the engine,
 * which keeps no row across releases, never holds one. A Redis row stored before that refusal keeps it,
 * and next lists what runs then: test/redis/cron-jitter-gap.test.ts.
 */
