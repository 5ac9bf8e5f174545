import type { RoleName } from '../processes/protocol';

/** `sundial-runner`: Sundial with its handlers run by a bare TimerRunner instead of SundialWorkerModule. */
export type ContenderName = 'sundial' | 'sundial-runner' | 'bullmq';

/** A one-shot timer as the scenarios ask for it: a key and an absolute due time (epoch ms). */
export interface OneShot {
  key: string;
  dueAt: number;
}

/** The same small payload on both sides, so memory and command counts compare like with like. */
export const BENCH_PAYLOAD = { bench: 1 };

/**
 * One side of the comparison, driven identically by every scenario. Each instance owns its connections to
 * the bench's Redis and is closed at the end of the scenario run that created it.
 */
export interface Contender {
  readonly name: ContenderName;
  /** the child process that runs timers */
  readonly workerRole: RoleName;
  /** child processes the contender needs besides workers to fire anything (one of each) */
  readonly serviceRoles: readonly RoleName[];
  /** Sundial's partition count, which its child processes must share (default 1) */
  readonly partitions?: number;
  scheduleMany(timers: readonly OneShot[]): Promise<void>;
  reschedule(key: string, dueAt: number): Promise<void>;
  cancel(key: string): Promise<void>;
  /** Cancels every pending timer whose key starts with `scope`; resolves with how many. */
  cancelAll(scope: string): Promise<number>;
  close(): Promise<void>;
}

export type ContenderFactory = (redisUrl: string) => Contender;
