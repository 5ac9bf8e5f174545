import { type ClockHandle, type Duration, refusals, toMs, VirtualClock } from '@sundial/core';

/** Lets every queued microtask run: one macrotask turn drains the whole microtask queue. */
const drainMicrotasks = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * SundialTestingModule's clock with `settleMs` (docs/spec.md §5.1): a VirtualClock whose `advance`, after
 * each tick, waits up to `settleMs` of real time for the runs that tick started to end. A handler that
 * awaits real I/O (a test database, an HTTP stub) did not settle within `advance` — it settles only work
 * that waits on promises —, so a test saw no outcome, and each later slot of a cron came while its run
 * still went on and was skipped (`overlap` skip). A run still going after `settleMs` (it waits on a later
 * virtual timer, or on its signal) stays pending as before, and is not waited for again.
 */
export class SettlingClock extends VirtualClock {
  /** the due time of each armed timer, to advance one due time (one tick) at a time */
  private readonly dues = new Map<ClockHandle, number>();
  /** the runs started since the last settle: the ones the next settle waits for */
  private fresh: PromiseLike<unknown>[] = [];
  private settling: Promise<void> = Promise.resolve();

  constructor(
    startMs: number,
    private readonly settleMs: number,
  ) {
    super(startMs);
  }

  override setTimeout(fn: () => void, ms: number): ClockHandle {
    const handle = super.setTimeout(() => {
      this.dues.delete(handle);
      fn();
    }, ms);
    this.dues.set(handle, this.now() + Math.max(0, ms || 0));
    return handle;
  }

  override clearTimeout(handle: ClockHandle): void {
    this.dues.delete(handle);
    super.clearTimeout(handle);
  }

  /** A handler's run as it starts (the memory backend hands each one to a clock that has this method). */
  followRun(run: PromiseLike<unknown>): void {
    this.fresh.push(run);
  }

  override async advance(by: number | Duration): Promise<void> {
    const ms = toMs(by, 'advance');
    if (ms < 0) {
      throw refusals.invalid(
        'advance',
        `advance must not be negative, got ${ms}`,
        'Pass a duration of 0 or more, such as "1s" or 1000.',
      );
    }
    const run = this.settling.then(() => this.settlingUntil(this.now() + ms));
    this.settling = run.catch(() => undefined);
    return run;
  }

  /** One due time at a time, each followed by the wait for the runs it started. */
  private async settlingUntil(target: number): Promise<void> {
    for (;;) {
      await this.settle();
      let next = Infinity;
      for (const due of this.dues.values()) next = Math.min(next, due);
      if (next > target) break;
      await super.advance(Math.max(0, next - this.now()));
    }
    await super.advance(target - this.now());
  }

  private async settle(): Promise<void> {
    const runs = this.fresh;
    this.fresh = [];
    if (runs.length === 0) return;
    let deadline: NodeJS.Timeout | undefined;
    const outlived = new Promise<void>((resolve) => (deadline = setTimeout(resolve, this.settleMs)));
    const ended = Promise.allSettled(runs).then(() => undefined);
    await Promise.race([ended, outlived]);
    clearTimeout(deadline);
    // the engine records each ended run (promise work); a run that started another run is waited for too
    await drainMicrotasks();
    if (this.fresh.length > 0) await this.settle();
  }
}
