import type { Contender, ContenderName } from '../contenders/contender';
import { CallTrace } from '../call-trace';
import { type Span, watchGcPauses } from '../diagnostics';
import type { RunRecord } from '../processes/protocol';
import { atMostTimesBullmq, none, row } from '../report';
import { summarize } from '../stats';
import {
  collectGarbage,
  diagnosed,
  leadTimeMs,
  oneShots,
  scheduleInBatches,
  sleepUntil,
  withWorkers,
  type Scenario,
} from './harness';

/** Pending timers fall due at this rate, so the churn races real fires. */
const FIRES_PER_SECOND = 1_000;
/** one worker process; its runs carry their claim instants (what a stale run is told by) */
const WORKERS = { processes: 1, claims: true };
const TICK_MS = 2;
/** After the churn, how long runs of superseded versions still have to show up. */
const SETTLE_MS = 1_000;

interface ChurnOutcome {
  latencies: number[];
  staleRuns: number;
  /** runs claimed before the call that superseded them was answered: the call met a running timer */
  claimedBeforeCall: number;
  failedOps: Record<string, number>;
}

/**
 * 4. Churn: while pending timers fire, reschedule (to a random later due) and cancel random not-yet-due
 * ones at a steady rate. Measures each call's latency as the caller sees it, and counts stale runs: a run
 * of a (key, due) claimed after its reschedule or cancel had been acknowledged (bench/README.md).
 */
export const churn: Scenario = async (context) => {
  const { churnPending: pending, churnOpsPerSecond, churnWindowMs, batchSize } = context.sizes;
  const outcomes: Partial<Record<ContenderName, ChurnOutcome>> = {};
  for (const factory of context.contenders) {
    await withWorkers(context, factory, WORKERS, async (contender, fleet) => {
      const spreadMs = (pending / FIRES_PER_SECOND) * 1_000;
      const firstDue = Date.now() + leadTimeMs(pending);
      const timers = oneShots(
        'bench.churn.',
        pending,
        (i) => firstDue + Math.floor((i * spreadMs) / pending),
      );
      await scheduleInBatches(contender, timers, batchSize);
      const trace = await CallTrace.start(context.redis.url);
      const churner = new Churner(contender, timers, spreadMs, trace);
      collectGarbage();
      await sleepUntil(firstDue);
      const gc = watchGcPauses();
      await diagnosed(context, contender.name, () => churner.run(churnOpsPerSecond, churnWindowMs));
      for (const line of (await trace?.stop()) ?? []) context.log(`${contender.name} ${line}`);
      const gcShare = gc.describe(churner.spans, summarize(churner.latencies).p99);
      if (gcShare) context.log(`${contender.name}: ${gcShare}`);
      await sleepUntil(Date.now() + SETTLE_MS);
      await fleet.stop();
      const { stale, claimedBefore } = staleness(fleet.runs, churner);
      const outcome = {
        latencies: churner.latencies,
        staleRuns: stale,
        claimedBeforeCall: claimedBefore,
        failedOps: churner.failures,
      };
      outcomes[contender.name] = outcome;
      const summary = summarize(outcome.latencies);
      context.log(
        `${contender.name}: ${summary.count} ops, p50 ${summary.p50.toFixed(2)} ms, p99 ${summary.p99.toFixed(2)} ms, ` +
          `stale runs ${outcome.staleRuns} (claimed before their call: ${outcome.claimedBeforeCall}), ` +
          `failed ops ${JSON.stringify(outcome.failedOps)}`,
      );
    });
  }
  const scenario =
    `4. churn: ${pending.toLocaleString('en-US')} pending, ` +
    `${churnOpsPerSecond.toLocaleString('en-US')} reschedule/cancel per s`;
  const field = (pick: (outcome: ChurnOutcome) => number) => ({
    sundial: outcomes.sundial && pick(outcomes.sundial),
    bullmq: outcomes.bullmq && pick(outcomes.bullmq),
  });
  return {
    rows: [
      row(
        scenario,
        'op latency p50 (ms)',
        field((o) => summarize(o.latencies).p50),
      ),
      row(
        scenario,
        'op latency p99 (ms)',
        field((o) => summarize(o.latencies).p99),
        atMostTimesBullmq(0.2),
      ),
      row(
        scenario,
        'stale runs',
        field((o) => o.staleRuns),
        none,
      ),
    ],
    details: Object.fromEntries(
      Object.entries(outcomes).map(([name, o]) => [
        name,
        {
          ...summarize(o.latencies),
          staleRuns: o.staleRuns,
          claimedBeforeCall: o.claimedBeforeCall,
          failedOps: o.failedOps,
        },
      ]),
    ),
  };
};

/**
 * The runs of a (key, due) whose reschedule or cancel was acknowledged: stale when claimed after the
 * answer, else claimed before it (the call met a running timer). By the claim, not the handler's start:
 * a run claimed before a cancel may start its handler after the cancel's answer reached the bench.
 */
function staleness(runs: readonly RunRecord[], churner: Churner): { stale: number; claimedBefore: number } {
  let stale = 0;
  let claimedBefore = 0;
  for (const [key, due, start, claimedAt = start] of runs) {
    const answeredAt = churner.supersededAt(key, due);
    if (answeredAt === undefined) continue;
    if (claimedAt > answeredAt) stale++;
    else claimedBefore++;
  }
  return { stale, claimedBefore };
}

/** Issues reschedule/cancel calls open-loop at a fixed rate and remembers what each one superseded. */
class Churner {
  readonly latencies: number[] = [];
  /** each call's start and answer (performance.now()), for the diagnostics */
  readonly spans: Span[] = [];
  readonly failures: Record<string, number> = {};
  private readonly dueOf = new Map<string, number>();
  private readonly live: string[];
  private readonly positionOf = new Map<string, number>();
  private readonly busy = new Set<string>();
  /** `${key}@${due}` → when the call that superseded that due was acknowledged */
  private readonly superseded = new Map<string, number>();

  constructor(
    private readonly contender: Contender,
    timers: ReadonlyArray<{ key: string; dueAt: number }>,
    private readonly spreadMs: number,
    /** with BENCH_DIAG=split: each call's commands, for the split of the slowest calls */
    private readonly trace?: CallTrace,
  ) {
    for (const { key, dueAt } of timers) this.dueOf.set(key, dueAt);
    this.live = timers.map((t) => t.key);
    this.live.forEach((key, position) => this.positionOf.set(key, position));
  }

  supersededAt(key: string, due: number): number | undefined {
    return this.superseded.get(`${key}@${due}`);
  }

  async run(opsPerSecond: number, windowMs: number): Promise<void> {
    const started = Date.now();
    const inFlight: Array<Promise<void>> = [];
    for (let issued = 0; Date.now() - started < windowMs;) {
      const owed = Math.floor(((Date.now() - started) * opsPerSecond) / 1_000);
      for (; issued < owed; issued++) inFlight.push(this.operate(issued % 2 === 0));
      await new Promise((resolve) => setTimeout(resolve, TICK_MS));
    }
    await Promise.all(inFlight);
  }

  private async operate(reschedule: boolean): Promise<void> {
    const key = this.pickFutureKey();
    if (key === undefined) return;
    const oldDue = this.dueOf.get(key)!;
    const newDue = this.freshDue(key, oldDue);
    this.busy.add(key);
    const call = () => (reschedule ? this.contender.reschedule(key, newDue) : this.contender.cancel(key));
    const started = performance.now();
    try {
      await (this.trace ? this.trace.call(reschedule ? 'reschedule' : 'cancel', call) : call());
      const answered = performance.now();
      this.latencies.push(answered - started);
      this.spans.push({ start: started, end: answered });
      this.superseded.set(`${key}@${oldDue}`, Date.now());
      if (reschedule) this.dueOf.set(key, newDue);
      else this.forget(key);
    } catch (error) {
      this.latencies.push(performance.now() - started);
      const reason = (error as { reason?: string }).reason ?? (error as Error).message;
      this.failures[reason] = (this.failures[reason] ?? 0) + 1;
    } finally {
      this.busy.delete(key);
    }
  }

  /**
   * A random later due that `key` never had: runs are told apart by (key, due), so a reschedule to the
   * same ms as a due it superseded (1 in `spreadMs` per call) would count the new version's run stale.
   */
  private freshDue(key: string, oldDue: number): number {
    let due = Date.now() + 100 + Math.floor(Math.random() * this.spreadMs);
    while (due === oldDue || this.superseded.has(`${key}@${due}`)) due++;
    return due;
  }

  /** A random live key that is not yet due and has no call in flight; a few tries, then give up this op. */
  private pickFutureKey(): string | undefined {
    for (let attempt = 0; attempt < 20; attempt++) {
      const key = this.live[Math.floor(Math.random() * this.live.length)];
      if (key !== undefined && !this.busy.has(key) && this.dueOf.get(key)! > Date.now()) return key;
    }
    return undefined;
  }

  /** Swap-remove, so a cancel costs O(1) however many timers are live. */
  private forget(key: string): void {
    const position = this.positionOf.get(key)!;
    const last = this.live.pop()!;
    if (last !== key) {
      this.live[position] = last;
      this.positionOf.set(last, position);
    }
    this.positionOf.delete(key);
  }
}
