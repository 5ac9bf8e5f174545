/**
 * "Now" for every view: the scheduler's, not this browser's (docs/spec.md §5.6). Due times are on
 * Redis's clock, which the scheduler stamps on every answer (`Sundial-Now`, epoch ms; api.ts notes
 * each); a laptop whose clock was 2 minutes off showed a timer due "in 1 min" that was already late.
 * Until an answer says it (or from a scheduler before the header), the browser's own clock.
 */
// @sundial/core's, compiled by this UI's build and served beside its modules (tsconfig.json `rootDirs`)
import { ServerClock } from './server-clock.js';

/** The one place this UI reads the browser's clock: the round trips, and now before any answer. */
export const serverClock = new ServerClock(() => Date.now());

/** The scheduler's now as this page estimates it (epoch ms): what every relative time is measured from. */
export function now(): number {
  return serverClock.now() ?? serverClock.local();
}
