import type { Clock, ClockHandle } from './clock';
import { toMs, type Duration } from './duration';
import { SundialError } from './errors';

interface VirtualTimer {
  readonly due: number;
  readonly fn: () => void;
}

/** More ticks than this at one instant means timers re-arm each other at zero delay forever. */
const MAX_TICKS_AT_ONE_INSTANT = 10_000;

/** Lets every queued microtask run: one macrotask turn drains the whole microtask queue. */
const drainMicrotasks = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * A clock that moves only when told to (docs/spec.md §3.7), so a fortnight of schedule runs in
 * milliseconds and every run happens at a time the test chose.
 */
export class VirtualClock implements Clock {
  private current: number;
  /** Armed timers in arming order, which breaks ties between equal due times. */
  private readonly armed = new Set<VirtualTimer>();
  /** Advances run one after another, so two concurrent calls do not interleave their ticks. */
  private queue: Promise<void> = Promise.resolve();

  constructor(startMs = 0) {
    this.current = startMs;
  }

  now(): number {
    return this.current;
  }

  setTimeout(fn: () => void, ms: number): ClockHandle {
    const timer: VirtualTimer = { due: this.current + Math.max(0, ms || 0), fn };
    this.armed.add(timer);
    return timer;
  }

  clearTimeout(handle: ClockHandle): void {
    this.armed.delete(handle as VirtualTimer);
  }

  /** How many timers are armed and not yet run. */
  pendingCount(): number {
    return this.armed.size;
  }

  /**
   * Moves time forward by `by`, running every timer that comes due on the way, in due order, as
   * successive ticks. A tick is one due time: each timer due then runs at most once, a timer armed
   * during the tick first runs in a later one, and a timer cleared by an earlier callback of the tick
   * does not run. Between ticks, and at the end, the microtask queue is drained, so async work that
   * only waits on promises (handlers, the engine's own chains) settles before time moves on; work
   * that waits on real I/O or on a later virtual timer stays pending. A callback that throws rejects
   * the advance where it stands. Do not await `advance` from inside a callback: advances queue up.
   */
  async advance(by: number | Duration): Promise<void> {
    const ms = toMs(by, 'advance');
    if (ms < 0) {
      throw new SundialError({
        reason: 'invalid',
        field: 'advance',
        message: `advance must not be negative, got ${ms}`,
        fix: 'Pass a duration of 0 or more, such as "1s" or 1000.',
      });
    }
    const run = this.queue.then(() => this.runUntil(this.current + ms));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async runUntil(target: number): Promise<void> {
    await drainMicrotasks();
    let ticksAtThisInstant = 0;
    for (let tick = this.nextTick(target); tick.length > 0; tick = this.nextTick(target)) {
      ticksAtThisInstant = tick[0].due === this.current ? ticksAtThisInstant + 1 : 0;
      if (ticksAtThisInstant > MAX_TICKS_AT_ONE_INSTANT) {
        throw new Error(
          `VirtualClock: timers keep re-arming at ${this.current} with no delay; time cannot advance`,
        );
      }
      this.current = tick[0].due;
      for (const timer of tick) {
        if (this.armed.delete(timer)) timer.fn();
      }
      await drainMicrotasks();
    }
    this.current = target;
  }

  /** The timers due at the earliest due time not after `target`, in arming order. */
  private nextTick(target: number): VirtualTimer[] {
    let earliest = Infinity;
    for (const timer of this.armed) earliest = Math.min(earliest, timer.due);
    if (earliest > target) return [];
    return [...this.armed].filter((timer) => timer.due === earliest);
  }
}
