// libs/core/src/browser: no imports (duration-text.ts says why): the operator UI and the CLI keep the
// scheduler's now with this one class.

/** The header the scheduler stamps on every answer: its now, epoch ms (docs/spec.md §5.2). */
export const NOW_HEADER = 'Sundial-Now';

/**
 * The scheduler's now as its answers say it (`Sundial-Now`, docs/spec.md §5.6): due times are on Redis's
 * clock, which the scheduler estimates, not on the client host's, which may be minutes off (a timer due
 * "in 1 min" that was already late). The offset is the latest answer's stamp against the middle of its
 * round trip, kept against `local`: the CLI's monotonic clock (`performance.now()`, so its host's wall
 * clock is never read), the UI's wall clock (`Date.now()`: `performance.now()` stops while a laptop
 * sleeps, and a page stays open across it).
 */
export class ServerClock {
  /** the scheduler's epoch ms minus `local()`; undefined before an answer that said it */
  private offsetMs: number | undefined;

  constructor(readonly local: () => number) {}

  /** Notes an answer's `Sundial-Now`, the request sent at `sentAt` and answered at `receivedAt` (`local()`). */
  note(header: string | null | undefined, sentAt: number, receivedAt: number): void {
    const stamp = header && /^\d+$/.test(header) ? Number(header) : NaN;
    if (Number.isSafeInteger(stamp)) this.offsetMs = stamp - (sentAt + receivedAt) / 2;
  }

  /** The scheduler's now (epoch ms); undefined until an answer said it (a scheduler before the header). */
  now(): number | undefined {
    return this.offsetMs === undefined ? undefined : Math.round(this.local() + this.offsetMs);
  }
}
