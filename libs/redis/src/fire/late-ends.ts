import type { RunOutcome } from './run-reports';

// Why a file of its own: the runner (timer-runner.ts) is at its size limit; what becomes of a handler that
// ends after its run was handed back at shutdown needs only the completion to send.

/**
 * The ends of handlers still going when their runs were handed back at the end of a shutdown grace
 * (docs/spec.md §4.6): a handler that ignores its aborted signal, or ends microseconds after the grace, still
 * ends while the worker closes. Its end is what happened after the hand-back and is sent as a late
 * completion — stale (the hand-back settled the run: put back to run again, or recorded lost), its ledger
 * entry naming this worker, counted (`sundial_runs_total{status="stale"}`) — as a run's whose lease ran out
 * (§3.8), not dropped. Held until the hand-back's release and reconcile are answered, and sent as a late
 * end (complete.lua outcome `late`: stale whatever the row, so also when that reconcile's batch did not
 * reach its lease): recorded as the outcome, it would say what the hand-back's line had just said would not
 * be. Ends after the worker's connections close are not recorded (nothing is left to send them on); the
 * hand-back's line named those runs.
 */
export class LateEnds {
  private readonly ended: (() => Promise<unknown>)[] = [];
  private readonly sent = new Set<Promise<unknown>>();
  private state: 'holding' | 'sending' | 'closed' = 'holding';

  /** A handed-back run's handler: once it ends (or at once, when it had), `complete` sends its outcome. */
  watch(
    handled: RunOutcome | Promise<RunOutcome>,
    complete: (outcome: RunOutcome) => Promise<unknown>,
  ): void {
    void Promise.resolve(handled).then((outcome) => {
      if (this.state === 'closed') return;
      const send = () => complete(outcome);
      if (this.state === 'holding') this.ended.push(send);
      else this.track(send());
    });
  }

  /** The hand-back settled: sends the ends held, and those that come until `close`; resolves once all are answered. */
  async send(): Promise<void> {
    if (this.state === 'holding') this.state = 'sending';
    for (const send of this.ended.splice(0)) this.track(send());
    while (this.sent.size > 0) await Promise.allSettled([...this.sent]);
  }

  /** The connections close: later ends are not recorded. */
  close(): void {
    this.state = 'closed';
    this.ended.length = 0;
  }

  private track(sending: Promise<unknown>): void {
    const done = sending.catch(() => undefined).finally(() => this.sent.delete(done));
    this.sent.add(done);
  }
}
