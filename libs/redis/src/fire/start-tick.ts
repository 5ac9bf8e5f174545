import { AlarmClock } from './alarm-clock';

// Why a file of its own: a run claimed ahead of its due must not start before it; how that wait is kept
// honest against Node's timers (whole ms, a loop clock that may lag) is its own concern.

/** The process's alarm thread, started by the first wait and dropped when it ends (idle or failed). */
let alarm: AlarmClock | null = null;

/**
 * Resolves once `performance.now()` has reached `tick`; null when it has already (the caller starts in
 * the same turn, as a run claimed at or after its due does). The alarm thread wakes it within a fraction
 * of a millisecond; until that thread runs (its first ~30 ms), a timer does. Each wake checks the
 * monotonic clock and waits again for what is left, so neither way starts a run early.
 */
export function untilTick(tick: number): Promise<void> | null {
  if (performance.now() >= tick) return null;
  return new Promise((resolve) => sleepUntil(tick, resolve));
}

/**
 * The current alarm thread's counts, or null when none runs: waits it resolved, and times it had to be
 * woken because what it waited for changed (what the tests check it by).
 */
export function alarmCounts(): { rang: number; nudged: number } | null {
  return alarm && { rang: alarm.rang, nudged: alarm.nudged };
}

function sleepUntil(tick: number, resolve: () => void): void {
  const left = tick - performance.now();
  if (left <= 0) return resolve();
  alarm ??= new AlarmClock(() => (alarm = null));
  // libuv counts whole ms from a loop time read before the call: a timer may fire a fraction early
  if (alarm.ready) void alarm.wait(tick).then(() => sleepUntil(tick, resolve));
  else setTimeout(sleepUntil, Math.ceil(left), tick, resolve);
}
