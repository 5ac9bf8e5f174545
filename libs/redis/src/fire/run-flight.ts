// Why a file of its own: the claims (due-claims.ts) add to it and the completions (completion-batcher.ts)
// take from it; neither owns the other.

/**
 * Timers a runner holds per partition while it waits on Redis for them: in claim calls on their way, and
 * as completions not yet answered. A handler's own run is not counted (a long handler holds nothing here).
 * At full size a backlog's claims all went at once — 100 jobs of 500, two claim calls on their way per
 * 100 timers: the whole 50,000 — while completions went one call of 100 at a time behind them in Redis's
 * queue, so ~11,000 finished runs at a time waited for their completion (their claim copies, rows and
 * frames: ~150 MB of heap, ~140 MB promoted and as much copied by scavenges per 50,000, a third of the
 * worker's CPU in GC and page faults; docs/design.md "The worker's heap in a backlog"). Past LIMIT
 * a claim call waits for completions to be answered: Redis still has a few calls queued at any time.
 */
export const RUN_FLIGHT_LIMIT = 500;

export class RunFlight {
  private readonly held = new Map<number, number>();
  /** claim loops waiting for room, woken all at once when some is made (each checks again) */
  private readonly waiters = new Map<number, Set<() => void>>();

  constructor(private readonly limit = RUN_FLIGHT_LIMIT) {}

  /** Whether a claim call of `partition` may go now; if not, `wake` is called once there is room. */
  room(partition: number, wake: () => void): boolean {
    if ((this.held.get(partition) ?? 0) < this.limit) return true;
    let waiting = this.waiters.get(partition);
    if (!waiting) this.waiters.set(partition, (waiting = new Set()));
    waiting.add(wake);
    return false;
  }

  add(partition: number, timers: number): void {
    this.held.set(partition, (this.held.get(partition) ?? 0) + timers);
  }

  done(partition: number, timers: number): void {
    const held = (this.held.get(partition) ?? 0) - timers;
    this.held.set(partition, held);
    const waiting = this.waiters.get(partition);
    if (held >= this.limit || !waiting) return;
    this.waiters.delete(partition);
    for (const wake of waiting) wake();
  }
}
