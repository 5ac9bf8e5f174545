import { type ClaimResult, parseClaimReply, type RawClaimReply } from './claim-reply';
import type { RedisClient } from '../infra/connection';
import type { SundialKeys } from './keys';
import { requestPrefix, resendSafe, type ScriptRequest } from './requests';
import { fieldsFromFlat, type RowFields } from './row';
import { type Completion, completeArgs } from './complete-args';
import { type CompleteReply, parseCompleteReply, type RawCompleteReply } from './replies';
import { runScript, type ScriptName } from './script-loader';

/** What a fire job carries per timer: enough to claim exactly that version. */
export interface TimerRef {
  id: string;
  key: string;
  version: number;
  due: number;
  /** traced timers only: the `traceparent` of the dispatcher's span for it (docs/design.md "Tracing") */
  tp?: string;
}

/** The data of a BullMQ fire job: one batch of due timers of one partition. */
export interface FireJobData {
  timers: TimerRef[];
}

/** One fire job's worth of due timers, and the jobId take-due named on their rows. */
export interface DueJob {
  jobId: string;
  timers: TimerRef[];
}

/** A taken timer whose row records the trace it was scheduled in (row field `tp`). */
export interface TracedTimer {
  key: string;
  traceParent: string;
  kind: string;
}

export interface DueTimers {
  /** the call's timers as one job (named `openJob` when given); undefined when it took none */
  job: DueJob | undefined;
  /** the timers of `job` scheduled in a trace; empty when tracing is off */
  traced: TracedTimer[];
  /** the earliest due still waiting in `due`, null when none */
  nextDue: number | null;
  /** Redis now when they were taken */
  now: number;
}

/** held: the row is `running` under a lease; free: an awaitTask=false tick, the next one already armed. */
export type RunMode = 'held' | 'free';

export type Outcome = 'ok' | 'failed' | 'lost';

export type { ClaimCopy, Completion } from './complete-args';

export interface LeaseRef {
  key: string;
  runCount: number;
}

/**
 * A run's lease renewal: `held` (renewed), `aborted` (renewed, but a free run whose timer was cancelled,
 * replaced, paused or rescheduled: it is to abort, its `P:abort` message may have been missed), `lost`
 * (no longer this worker's: it is to abort).
 */
export type LeaseRenewal = 'held' | 'aborted' | 'lost';

/** renew-leases.lua's flag per run → its renewal. */
const LEASE_RENEWALS: readonly LeaseRenewal[] = ['lost', 'held', 'aborted'];

export interface ReconcileResult {
  rearmed: number;
  requeued: number;
  /** at-most-once runs whose lease expired: the caller settles them as lost */
  lost: RowFields[];
}

/** Typed calls to the fire-path Lua commands (docs/design.md "Fire path contract"), one partition each. */
export class FireCommands {
  constructor(
    private readonly redis: RedisClient,
    private readonly keys: SundialKeys,
  ) {}

  /** Whether a call made now is written to Redis at once (its connection ready), not held until one is. */
  get connected(): boolean {
    return this.redis.status === 'ready';
  }

  /**
   * Takes up to `limit` of the timers due within `leadMs` from Redis now, as one job; it is named
   * `openJob` when given (the caller's job not yet added, which they extend: take-due.lua).
   */
  async takeDue(partition: number, limit: number, leadMs: number, openJob = ''): Promise<DueTimers> {
    const [nextDue, now, [jobId, ...flat], traced] = (await this.run(
      'take-due',
      partition,
      limit,
      leadMs,
      openJob,
    )) as [string, string, string[], string[]];
    const timers: TimerRef[] = [];
    for (let i = 0; i < flat.length; i += 4) {
      timers.push({
        id: flat[i],
        key: flat[i + 1],
        version: Number(flat[i + 2]),
        due: Number(flat[i + 3]),
      });
    }
    return {
      job: jobId === undefined ? undefined : { jobId, timers },
      traced: tracedTimers(traced),
      nextDue: nextDue === '' ? null : Number(nextDue),
      now: Number(now),
    };
  }

  /**
   * A late slot a slot policy does not run (pass-late.lua): `next` armed, or the timer ends with `ended`.
   * Returns false when the row moved on since the claim answered 'check' (nothing written).
   */
  async passLate(
    partition: number,
    ref: Pick<TimerRef, 'id' | 'key' | 'version'>,
    step: { next: number | null; ended?: string; missed: number },
  ): Promise<boolean> {
    const { id, key, version } = ref;
    const next = step.next === null ? '' : step.next;
    const ended = step.ended ?? '';
    const reply = (await this.run('pass-late', partition, id, key, version, next, ended, step.missed)) as [
      string,
    ];
    return reply[0] === 'done';
  }

  /**
   * The request id is the claim token: a call ioredis repeats after a lost reply gets its first answer.
   * `aheadMs`: a pending timer due within that many ms of Redis's clock is claimed (its reply's `leftMs`
   * says how long to wait before its handler starts); one further ahead answers `early`. `lacking` (sent only when given):
   * the handlers it lacks that a live worker of the partition has (their timers answer `passed`).
   */
  async claim(
    partition: number,
    leaseMs: number,
    workerId: string,
    refs: TimerRef[],
    slotsChecked = false,
    aheadMs = 0,
    lacking?: readonly string[],
  ): Promise<ClaimResult[]> {
    const flags = lacking ? (slotsChecked ? '1' : '0') + JSON.stringify(lacking) : slotsChecked ? '1' : '0';
    // one array of the arguments, filled in place: a claim at 1,000/s is a call per timer or two
    const args: (string | number)[] = [leaseMs, workerId, flags, aheadMs];
    for (const ref of refs) args.push(ref.id, ref.key, ref.version);
    const argv1 = requestPrefix(this.keys.prefix, resendSafe());
    const replies = (await this.runWith(argv1, 'claim', partition, ...args)) as RawClaimReply[];
    const results: ClaimResult[] = new Array(replies.length);
    const by = { id: '', key: '', version: 0, workerId };
    for (let n = 0; n < replies.length; n++) {
      by.id = refs[n].id;
      by.key = refs[n].key;
      by.version = refs[n].version;
      results[n] = parseClaimReply(replies[n], by);
    }
    return results;
  }

  /** `request`: the same for every try of one batch, so a repeated one answers as the first did. */
  async complete(
    partition: number,
    completions: Completion[],
    request: ScriptRequest = resendSafe(),
  ): Promise<CompleteReply[]> {
    const argv1 = requestPrefix(this.keys.prefix, request);
    const replies = (await this.runWith(
      argv1,
      'complete',
      partition,
      ...completeArgs(completions),
    )) as RawCompleteReply[];
    return replies.map(parseCompleteReply);
  }

  /**
   * Turns a claimed cron run into a free run and arms `next` (overlap 'allow' / 'cancel-other'); false when
   * the row is no longer this run's. Safe to repeat: a repeated call finds the free run it made.
   */
  async detach(
    partition: number,
    workerId: string,
    run: LeaseRef & { version: number },
    next: number,
    missed: number,
  ): Promise<boolean> {
    const { key, version, runCount } = run;
    return (await this.run('detach', partition, workerId, key, version, runCount, next, missed)) === 1;
  }

  /** Extends the leases still held; replies per run whether it still is, and whether its timer aborted it. */
  async renewLeases(
    partition: number,
    leaseMs: number,
    workerId: string,
    runs: LeaseRef[],
  ): Promise<LeaseRenewal[]> {
    const args = runs.flatMap((run) => [run.key, run.runCount]);
    const replies = (await this.run('renew-leases', partition, leaseMs, workerId, ...args)) as number[];
    return replies.map((flag) => LEASE_RENEWALS[flag] ?? 'lost');
  }

  /**
   * Expires this worker's leases at once (graceful stop); the next reconcile settles them. `unstarted`:
   * these runs' handlers never ran, so at-most-once ones are put back to run again too (release.lua).
   */
  async release(partition: number, workerId: string, runs: LeaseRef[], unstarted = false): Promise<number> {
    const args = runs.flatMap((run) => [run.key, run.runCount]);
    return (await this.run('release', partition, workerId, unstarted ? '1' : '', ...args)) as number;
  }

  async reconcile(partition: number, graceMs: number, limit: number): Promise<ReconcileResult> {
    const jobKeyPrefix = `${this.keys.bullPrefix}:${this.keys.queueName(partition)}:`;
    const [rearmed, requeued, lost] = (await this.run(
      'reconcile',
      partition,
      graceMs,
      limit,
      jobKeyPrefix,
    )) as [number, number, string[][]];
    return { rearmed, requeued, lost: lost.map((flat) => fieldsFromFlat(flat)) };
  }

  /**
   * One batch of the sweep of the partition's cancelAll scope record (cancel-all.lua 'sweep'), when it
   * holds one: left by a client that stopped before its sweep ended (a live one sweeping too is harmless:
   * each batch takes its own keys). Whether more is left.
   */
  async sweepRecord(partition: number, batch: number): Promise<boolean> {
    if ((await this.redis.exists(`${this.keys.base(partition)}sc`)) === 0) return false;
    const reply = (await this.run('cancel-all', partition, 0, '', batch, '', 'sweep', '')) as number[];
    return reply[1] === 1;
  }

  private run(script: ScriptName, partition: number, ...args: (string | number)[]): Promise<unknown> {
    return this.runWith(this.keys.prefix, script, partition, ...args);
  }

  private runWith(
    argv1: string,
    script: ScriptName,
    partition: number,
    ...args: (string | number)[]
  ): Promise<unknown> {
    return runScript(this.redis, script, this.keys.base(partition), this.keys.ledgerSize, argv1, ...args);
  }
}

function tracedTimers(flat: string[]): TracedTimer[] {
  const traced: TracedTimer[] = [];
  for (let i = 0; i < flat.length; i += 3) {
    traced.push({ key: flat[i], traceParent: flat[i + 1], kind: flat[i + 2] });
  }
  return traced;
}
