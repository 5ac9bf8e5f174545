/**
 * Now in epoch ms of the system clock, to the µs: the run starts' clock (lateness = start − due). Every
 * process reads the same clock (the monotonic one, from an origin read off the system clock at its start:
 * within ~5 µs of `Date.now()`, measured); `Date.now()`'s whole ms would hide what a sub-ms start gains.
 */
export function epochNow(): number {
  return performance.timeOrigin + performance.now();
}
