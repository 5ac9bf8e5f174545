import { channel } from 'node:diagnostics_channel';

/**
 * Where one run's lateness went, in this process's wall clock (Date.now() ms), from the fire job's arrival
 * to its handler's start. Published on RUN_TIMING_CHANNEL only while something subscribes (the bench with
 * BENCH_DIAG=1): with no subscriber nothing is built per run.
 */
export interface RunTiming {
  key: string;
  /** the due the run was claimed for (Redis clock) */
  due: number;
  /** the fire job reached TimerRunner (late when after `due`: dispatcher, BullMQ or this process's delay) */
  arrivedAt: number;
  /** the claim that claimed it was sent (after `due`: the local wake was late) */
  claimSentAt: number;
  /** that claim's answer was read (Redis's queue and work, the network, this process's delay) */
  claimAnsweredAt: number;
  /** claim calls it took: more than 1 when Redis still found it early, or a slot policy checked it */
  claimCalls: number;
  /**
   * the claim's answer: ms from Redis's TIME at the claim to the due (0: claimed at or after its due, so
   * the round trip was part of the lateness; more: it was back before the due and the handler waited)
   */
  leftMs: number;
  /** the handler is called */
  startedAt: number;
}

/**
 * When (wall clock) a claim call's fire job arrived and the call went, for the spans and the run timings,
 * and when it went and its answer was read by the monotonic clock (`performance.now()`: what a claimed
 * run's start is reckoned from, fire/redis-ticks.ts): one per claim call, shared by its timers.
 */
export type ClaimTimes = Pick<RunTiming, 'arrivedAt' | 'claimSentAt' | 'claimAnsweredAt'> & {
  sentTick: number;
  answeredTick: number;
};

/** `node:diagnostics_channel` name of RunTiming messages. */
export const RUN_TIMING_CHANNEL = 'sundial:run-timing';

export const runTimings = channel(RUN_TIMING_CHANNEL);

/** Publishes a run's timing as its handler is called (only while something subscribes: runTimings). */
export function publishRunTiming(
  key: string,
  claimed: { due: number; leftMs: number },
  times: ClaimTimes,
  claimCalls: number,
): void {
  runTimings.publish({
    key,
    due: claimed.due,
    arrivedAt: times.arrivedAt,
    claimSentAt: times.claimSentAt,
    claimAnsweredAt: times.claimAnsweredAt,
    claimCalls,
    leftMs: claimed.leftMs,
    startedAt: Date.now(),
  } satisfies RunTiming);
}
