import type { Redis } from 'ioredis';
import type { SundialKeys } from './keys';
import { fieldsFromFlat, type RowFields } from './row';
import { runScript } from './scripts';

/** What a fire job carries per timer: enough to claim exactly that version. */
export interface TimerRef {
  id: string;
  key: string;
  version: number;
  due: number;
}

/** The data of a BullMQ fire job: one batch of due timers of one partition. */
export interface FireJobData {
  timers: TimerRef[];
}

export interface DueBatch {
  /** the jobId for this batch, null when nothing was due */
  jobId: string | null;
  timers: TimerRef[];
  /** the earliest due still waiting in `due`, null when none */
  nextDue: number | null;
  /** Redis now when the batch was taken */
  now: number;
}

/** held: the row is `running` under a lease; free: an awaitTask=false tick, the next one already armed. */
export type RunMode = 'held' | 'free';

export type ClaimResult =
  | { kind: 'claimed'; mode: RunMode; due: number; fields: RowFields }
  | { kind: 'early'; waitMs: number }
  | { kind: 'stale'; reason: string }
  | { kind: 'lost'; fields: RowFields };

export type Outcome = 'ok' | 'failed' | 'lost';

export interface Completion {
  id: string;
  key: string;
  version: number;
  runCount: number;
  mode: RunMode;
  outcome: Outcome;
  error?: { message: string; reason?: string };
  /** cron: the next occurrence after now */
  cronNext?: number;
  /** cron: slots that came while the run went on */
  skipped: number;
}

export interface LeaseRef {
  key: string;
  runCount: number;
}

export interface ReconcileResult {
  rearmed: number;
  requeued: number;
  /** at-most-once runs whose lease expired: the caller settles them as lost */
  lost: RowFields[];
}

/** Typed calls to the fire-path Lua commands (docs/design.md "Fire path contract"), one partition each. */
export class FireCommands {
  constructor(
    private readonly redis: Redis,
    private readonly keys: SundialKeys,
  ) {}

  async takeDue(partition: number, limit: number): Promise<DueBatch> {
    const reply = (await this.run('take-due', partition, limit)) as string[];
    const timers: TimerRef[] = [];
    for (let i = 3; i < reply.length; i += 4) {
      timers.push({
        id: reply[i],
        key: reply[i + 1],
        version: Number(reply[i + 2]),
        due: Number(reply[i + 3]),
      });
    }
    return {
      jobId: reply[0] === '' ? null : reply[0],
      timers,
      nextDue: reply[1] === '' ? null : Number(reply[1]),
      now: Number(reply[2]),
    };
  }

  async claim(
    partition: number,
    leaseMs: number,
    runnerId: string,
    refs: TimerRef[],
  ): Promise<ClaimResult[]> {
    const args = refs.flatMap((ref) => [ref.id, ref.key, ref.version]);
    const replies = (await this.run('claim', partition, leaseMs, runnerId, ...args)) as string[][];
    return replies.map(([code, ...rest]): ClaimResult => {
      switch (code) {
        case 'held':
        case 'free':
          return { kind: 'claimed', mode: code, due: Number(rest[0]), fields: fieldsFromFlat(rest.slice(1)) };
        case 'early':
          return { kind: 'early', waitMs: Number(rest[0]) };
        case 'lost':
          return { kind: 'lost', fields: fieldsFromFlat(rest) };
        default:
          return { kind: 'stale', reason: rest[0] };
      }
    });
  }

  async complete(partition: number, completions: Completion[]): Promise<('done' | 'stale')[]> {
    const args = completions.flatMap((c) => [
      c.id,
      c.key,
      c.version,
      c.runCount,
      c.mode,
      c.outcome,
      c.error?.message ?? '',
      c.error?.reason ?? '',
      c.cronNext ?? '',
      c.skipped,
    ]);
    return (await this.run('complete', partition, ...args)) as ('done' | 'stale')[];
  }

  /** Extends the leases still held; replies per run whether it still is. */
  async renewLeases(
    partition: number,
    leaseMs: number,
    runnerId: string,
    runs: LeaseRef[],
  ): Promise<boolean[]> {
    const args = runs.flatMap((run) => [run.key, run.runCount]);
    const replies = (await this.run('renew-leases', partition, leaseMs, runnerId, ...args)) as number[];
    return replies.map((held) => held === 1);
  }

  /** Expires this runner's leases at once (graceful stop); the next reconcile settles them. */
  async release(partition: number, runnerId: string, runs: LeaseRef[]): Promise<number> {
    const args = runs.flatMap((run) => [run.key, run.runCount]);
    return (await this.run('release', partition, runnerId, ...args)) as number;
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
    return { rearmed, requeued, lost: lost.map(fieldsFromFlat) };
  }

  private run(script: string, partition: number, ...args: (string | number)[]): Promise<unknown> {
    return runScript(this.redis, script, this.keys.base(partition), this.keys.prefix, ...args);
  }
}
