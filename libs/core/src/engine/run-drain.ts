import type { Clock } from '../clock';

/**
 * The handlers the engine has executing, for a dispose that gives them a grace (the memory backend's
 * shutdown, docs/spec.md §5.1a): once draining, no due timer starts a run; the drain ends when every
 * handler has returned or the grace has passed on the engine's clock, whichever comes first.
 */
export class RunDrain {
  private readonly executing = new Set<Promise<void>>();
  private started = false;

  get draining(): boolean {
    return this.started;
  }

  /** A handler's execution (it never rejects), followed until it settles. */
  track(execution: Promise<void>): void {
    this.executing.add(execution);
    void execution.finally(() => this.executing.delete(execution));
  }

  /** Stops new runs; the wait for the ones executing, or null when there is none to wait for. */
  drain(clock: Clock, graceMs: number): Promise<void> | null {
    this.started = true;
    if (graceMs <= 0 || this.executing.size === 0) return null;
    return new Promise<void>((done) => {
      const handle = clock.setTimeout(done, graceMs);
      void this.settled().then(() => {
        clock.clearTimeout(handle);
        done();
      });
    });
  }

  /** Resolves once no handler is executing (a run a handler starts meanwhile is waited for too). */
  private async settled(): Promise<void> {
    while (this.executing.size > 0) await Promise.all(this.executing);
  }
}
