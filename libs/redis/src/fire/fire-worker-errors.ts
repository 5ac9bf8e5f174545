import type { Clock } from '@sundial/core';
import { type ErrorLog, type ErrorSource, ErrorThrottle } from '../infra/error-throttle';

/**
 * BullMQ's words for a fire job whose lock is gone: its renewal got no answer in time (lock-manager.ts)
 * or its finish found the lock expired (finished-errors.ts, `moveToFinished`: `Missing lock`), held by
 * another worker (`Lock mismatch`: the stalled check handed the job on) or the job gone (`Missing key`:
 * handed on and finished there). Each follows a worker or a Redis that did nothing for longer than the
 * lock (2 × lease): frozen, starved of CPU, swapped out, cut off.
 */
const LOST_LOCK =
  /^(?:could not renew lock for job|Missing lock for job|Lock mismatch for job|Missing key for job) (.+?)\.?(?: |$)/;

/** The job id of a BullMQ lost-lock error, else undefined. */
export function lostLockJob(error: Error): string | undefined {
  return LOST_LOCK.exec(error.message)?.[1];
}

/** Where a fire consumer's errors go: unexpected ones at error, a lost lock at warn, recoveries at info. */
export interface FireWorkerLog extends ErrorLog {
  warn(message: string): void;
}

/**
 * A fire consumer's (BullMQ Worker's) errors, throttled as error-throttle.ts says. A lost lock is not an
 * error of Sundial's: the runs of that job are leased and recorded by Sundial's own claims and
 * completions (docs/spec.md §3.8), whatever BullMQ then does with the job (its stalled check may hand it
 * again, and that delivery claims only timers still due at the version it names). So it is one warn
 * saying so, throttled apart; everything else stays an error.
 */
export class FireWorkerErrors {
  private readonly errors: ErrorThrottle;
  private readonly lostLocks: ErrorThrottle;

  constructor(what: string, log: FireWorkerLog, clock?: Pick<Clock, 'now'>) {
    this.errors = new ErrorThrottle(what, log, clock);
    this.lostLocks = new ErrorThrottle(what, { error: log.warn, info: log.info }, clock);
  }

  error(error: Error): void {
    const job = lostLockJob(error);
    if (job === undefined) return this.errors.error(error);
    this.lostLocks.error(
      new Error(
        `${lostLockStory(job, error.message)} Its runs are ` +
          'leased and recorded by Sundial itself, not by that lock: none is lost; BullMQ may deliver the ' +
          'job again, and that delivery runs only timers still due.',
      ),
    );
  }

  /** As ErrorThrottle.holdUntil: errors counted, not logged, until `settled` (its owner's start). */
  holdUntil(settled: Promise<unknown>): this {
    this.errors.holdUntil(settled);
    this.lostLocks.holdUntil(settled);
    return this;
  }

  /**
   * The errors recover with `source`'s connection (ErrorThrottle.recoversWith, watched since its `start`
   * or its first `error`). A lost lock does not:
   * it is said once Redis answers again, so a `connected again` after it would be no news; its run ends
   * after 30 s without one (error-throttle.ts).
   */
  recoversWith(source: Pick<ErrorSource, 'getBackend'>, since: 'start' | 'error' = 'start'): this {
    this.errors.recoversWith(source, since);
    return this;
  }
}

/** Routes a fire consumer's errors through a new FireWorkerErrors that recovers with its connection. */
export function watchFireWorkerErrors(source: ErrorSource, what: string, log: FireWorkerLog): void {
  const errors = new FireWorkerErrors(what, log).recoversWith(source);
  source.on('error', (error) => errors.error(error));
}

/**
 * What BullMQ's words say happened. `Missing key` (the job gone when its finish came) follows a lock that
 * expired, as the others do, or no lapse at all: a finish sent again after a reconnect (ioredis resends a
 * command left unanswered), the first having reached Redis and finished the job, its reply lost with the
 * connection (seen in the chaos run "client connections killed": 4 s of kills, twice the lease 8 s).
 */
function lostLockStory(job: string, words: string): string {
  if (words.startsWith('Missing key for job'))
    return (
      `fire job ${job} was gone when its finish reached Redis (its finish sent again after a reconnect, the ` +
      `first having finished it and lost its reply; or BullMQ's stalled check had handed it on and it ` +
      `finished elsewhere; BullMQ said "${words}").`
    );
  return (
    `fire job ${job} lost its BullMQ lock (none of its renewals reached Redis in time: the worker or ` +
    `Redis frozen, starved, swapped out or cut off for longer than twice the lease; BullMQ said "${words}").`
  );
}
