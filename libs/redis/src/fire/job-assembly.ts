import type { DueTimers, OpenJob, TimerRef } from '../store/fire-commands';
import { DispatchSpans } from '../tracing/fire-spans';

// Why a file of its own: when the dispatcher takes and adds is dispatcher.ts's; how a job's timers come
// together over several take-due calls (and their spans with them) is this.

/** A fire job as it is added: its timers, and the dispatch spans of the traced ones. */
export interface AssembledJob {
  jobId: string;
  timers: TimerRef[];
  spans: DispatchSpans[];
}

/**
 * Puts take-due replies together into fire jobs of `perJob` timers. A call takes fewer timers than a job
 * holds (TAKE_PER_CALL), so a job is filled over several calls: a call's first timers join the job the
 * previous call left with room (take-due names them its jobId on their rows), and a job is added once it
 * is full or its pass ends — a pass makes as many jobs as when one call took a job's worth.
 */
export class JobAssembly {
  private open: AssembledJob | undefined;

  constructor(
    private readonly perJob: number,
    private readonly queueName: string,
  ) {}

  /** The job the next call's first timers join: undefined when none has room. */
  openJob(): OpenJob | undefined {
    if (!this.open || this.open.timers.length >= this.perJob) return undefined;
    return { jobId: this.open.jobId, size: this.open.timers.length };
  }

  /** Takes in a reply (taken with `openJob()`); returns the jobs it filled, to add now. */
  take(taken: DueTimers): AssembledJob[] {
    const full: AssembledJob[] = [];
    for (const job of taken.jobs) {
      if (job.jobId !== this.open?.jobId) {
        if (this.open) full.push(this.open);
        this.open = { jobId: job.jobId, timers: [], spans: [] };
      }
      const spans = DispatchSpans.start(taken, job, this.queueName);
      if (spans) this.open.spans.push(spans);
      this.open.timers.push(...job.timers);
    }
    if (this.open && this.open.timers.length >= this.perJob) full.push(this.finish()[0]);
    return full;
  }

  /** The job still open, at the end of a pass (or after a failed call: its timers are taken). */
  finish(): AssembledJob[] {
    const open = this.open;
    this.open = undefined;
    return open ? [open] : [];
  }
}
