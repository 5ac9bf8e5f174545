/** An armed wait, as returned by `Clock.setTimeout`; only the clock that made it can clear it. */
export type ClockHandle = object;

/** Where time comes from (docs/spec.md §3.7): the real clock in production, a `VirtualClock` in tests. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): ClockHandle;
  clearTimeout(handle: ClockHandle): void;
}

/** Node's timers hold at most 2^31−1 ms; a longer delay fires after 1 ms instead. */
export const MAX_TIMEOUT_MS = 2 ** 31 - 1;

class RealClockHandle {
  timer: ReturnType<typeof setTimeout> | undefined;
}

/**
 * A clock on `Date.now()` and the global timers. A wait longer than `maxChunkMs` is taken in
 * pieces, so a timer a year away fires in a year. The globals are looked up at each call, which
 * keeps the clock usable under fake global timers.
 */
export function createRealClock(maxChunkMs = MAX_TIMEOUT_MS): Clock {
  return {
    now: () => Date.now(),
    setTimeout(fn, ms) {
      const handle = new RealClockHandle();
      const wait = (remaining: number): void => {
        const chunk = Math.min(remaining, maxChunkMs);
        handle.timer = globalThis.setTimeout(
          () => (remaining > chunk ? wait(remaining - chunk) : fn()),
          chunk,
        );
      };
      wait(Math.max(0, ms));
      return handle;
    },
    clearTimeout(handle) {
      if (handle instanceof RealClockHandle) globalThis.clearTimeout(handle.timer);
    },
  };
}

export const realClock: Clock = createRealClock();
