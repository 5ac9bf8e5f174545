/**
 * The fire jobs a runner has taken and not yet settled: its close waits for them (TimerRunner.shutdown)
 * before it hands back what still runs.
 */
export class InFlightJobs {
  private readonly jobs = new Set<Promise<void>>();

  /** `job`, counted until it settles. */
  track(job: Promise<void>): Promise<void> {
    this.jobs.add(job);
    return job.finally(() => this.jobs.delete(job));
  }

  /**
   * Every job settled, those the consumers still hand over while they close included: a BullMQ Worker
   * runs the job it fetched before its close() was called, and its close resolves after. Waiting only
   * for the jobs running when the close began, the wait could end while such a job's handler went on:
   * its run was handed back and ran again elsewhere at the same version (runCount 2; seen once in
   * test/cluster/repartition.test.ts as the old count's workers shut down, test/redis/close-late-job.test.ts).
   */
  async drained(consumersClosed: Promise<void>): Promise<void> {
    await Promise.allSettled([consumersClosed, ...this.jobs]);
    while (this.jobs.size > 0) await Promise.allSettled([...this.jobs]);
  }
}
