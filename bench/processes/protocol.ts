/** What a bench child process runs: a contender's workers, or a service a contender needs besides them. */
export type RoleName = 'bullmq-worker' | 'sundial-worker' | 'sundial-runner' | 'sundial-dispatcher';

export interface ChildConfig {
  role: RoleName;
  redisUrl: string;
  /** jobs a worker runs at once */
  concurrency: number;
  /** Sundial's partitions (default 1) */
  partitions?: number;
  /**
   * record each run's claim instant too (RunRecord's `claimedAt`): Sundial reads it from ctx.claimedAt, BullMQ
   * from its job: only the scenario that needs it asks
   */
  claims?: boolean;
}

/**
 * One handler start: the timer's key, when it was due and when the handler started, in epoch ms of the
 * system clock that every process on this machine shares (start is `epochNow()` in the worker, to the µs). With
 * `claims`: when the store handed the run to the worker — Sundial's claim in Redis (`ctx.claimedAt`,
 * Redis's TIME), BullMQ's move to active (`job.processedOn`, the worker's Date.now() as it asked) — which
 * precedes the handler's start by the claim's answer and the worker's event loop.
 */
export type RunRecord = [key: string, due: number, start: number, claimedAt?: number];

/** A role started in a child process; the contenders implement these, `roles.ts` names them. */
export interface RunningRole {
  close(): Promise<void>;
}

export type RoleStarter = (config: ChildConfig, record: (run: RunRecord) => void) => Promise<RunningRole>;

export type ChildMessage = { type: 'ready' } | { type: 'runs'; runs: RunRecord[] } | { type: 'stopped' };
export type ParentMessage = { type: 'stop' };
