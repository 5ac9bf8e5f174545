import type { SkipReason, TimerKind } from '@sundial/core';
import type { StaleReason } from '../store/replies';

/**
 * What a run's completion recorded: its handler's outcome, or `stale` when its timer was cancelled,
 * replaced or its lease lost while it ran (the outcome was dropped, docs/spec.md §3.2 step 4).
 */
export type RunStatus = 'ok' | 'failed' | 'stale';

/** A finished handler run, as the metrics see it. */
export interface FinishedRun {
  handler: string;
  status: RunStatus;
  /** run start − due, by the Redis clock */
  latenessMs: number;
  durationMs: number;
}

/**
 * A finished handler run whose completion never reached Redis (docs/spec.md §4.7): it recorded nothing, so
 * it has no status — timed, not counted as a run.
 */
export type UnansweredRun = Omit<FinishedRun, 'status'>;

/** What one reconcile pass did, over every partition. */
export interface ReconcileCounts {
  /** armed timers whose BullMQ job had vanished, armed again */
  rearmed: number;
  /** at-least-once runs whose worker was lost, queued to run again */
  requeued: number;
  /** at-most-once runs whose worker was lost, recorded failed with reason 'lost' */
  lost: number;
}

/**
 * Everything the Redis classes report for metrics (docs/spec.md §6.1), one typed map: RedisTimers,
 * TimerRunner and Reconciler each take a `SundialObserver` and tell it the events of their work;
 * SundialMetrics implements them all. (Users' timer events — docs/spec.md §3.6 — are a separate,
 * public stream: `on(event, listener)`.)
 */
export interface SundialObserverEvents {
  /** RedisTimers: a timer created or replaced (not one kept by ifExists 'keep') */
  scheduled: { kind: TimerKind };
  /** RedisTimers: timers cancelled by cancel or cancelAll */
  cancelled: { count: number };
  /** TimerRunner: a handler run ended, and its completion was answered (or written to Redis: docs/spec.md §4.7) */
  runFinished: FinishedRun;
  /**
   * TimerRunner: a handler run ended whose completion never reached Redis (dropped unsent at a shutdown
   * while Redis did not answer) or was refused: its lease expires and the settlement that follows — put
   * back to run again, or recorded lost — is counted by the process that makes it (`reconciled`, `workerLost`)
   */
  runUnanswered: UnansweredRun;
  /**
   * TimerRunner: a fire job's timer found stale at claim (it never ran), or a run whose completion the
   * version check made a no-op (it ran; its outcome was dropped: the timer changed meanwhile)
   */
  stale: { reason: StaleReason; phase: 'claim' | 'complete' };
  /** TimerRunner and Reconciler (lost runs): periodic slots gone past without a run (docs/spec.md §3.3) */
  skipped: { reason: SkipReason; count: number };
  /** Reconciler: after every pass; TimerRunner: after the reconcile of its hand-back at shutdown */
  reconciled: ReconcileCounts;
  /**
   * TimerRunner: a run whose worker was lost, settled by a claim of its redelivered fire job — an
   * at-least-once run taken over to run again (`requeued`), or an at-most-once one recorded lost (`lost`)
   */
  workerLost: { outcome: 'requeued' | 'lost' };
  /** TimerRunner: a partition's fire-job consumer had stopped taking jobs; it was closed and made anew */
  consumerRecreated: { partition: number };
  /** TimerRunner: it takes the fire jobs of `partitions` (at start, `on`), or no longer (at close) */
  consuming: { partitions: readonly number[]; on: boolean };
}

/** Listens to any part of SundialObserverEvents. */
export type SundialObserver = {
  [E in keyof SundialObserverEvents]?: (event: SundialObserverEvents[E]) => void;
};
