// Why a file of its own: a run claimed ahead of its due must not start before it; how that wait is kept
// honest against Node's timers (whole ms, a loop clock that may lag) is its own concern.

/**
 * Resolves once `performance.now()` has reached `tick`; null when it has already (the caller starts in
 * the same turn, as a run claimed at or after its due does). A timer may fire early by a fraction of a
 * millisecond (libuv counts whole ms from a loop time read before the call), so each wake checks the
 * monotonic clock and sleeps again for what is left.
 */
export function untilTick(tick: number): Promise<void> | null {
  if (performance.now() >= tick) return null;
  return new Promise((resolve) => sleepUntil(tick, resolve));
}

function sleepUntil(tick: number, resolve: () => void): void {
  const left = tick - performance.now();
  if (left <= 0) resolve();
  else setTimeout(sleepUntil, Math.ceil(left), tick, resolve);
}
