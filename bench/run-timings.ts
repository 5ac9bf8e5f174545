import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { type EntryType, PerformanceObserver, performance } from 'node:perf_hooks';
import { RUN_TIMING_CHANNEL, type RunTiming } from '@sundial/redis';
import { gcKind } from './diagnostics';
import { percentile } from './stats';

/** An event-loop turn this much later than its 1 ms interval counts as a stall. */
const STALL_MS = 3;

type Interval = readonly [start: number, end: number];

/**
 * With BENCH_DIAG=1, in a TimerRunner's process: where each run's lateness went (TimerRunner's
 * RunTiming messages), and this process's GC pauses and event-loop stalls, so the slowest runs' time can
 * be put on a component — the job arriving late, the local wake, the claim's round trip, the start —
 * and on what overlapped it. `stop()` describes them per key prefix (one line group per bench rate).
 */
export function watchRunTimings(): { stop(): string[] } {
  // runs by key prefix (a bench rate's keys), GC pauses by kind
  const timings = new Map<string, RunTiming[]>();
  const record = (message: unknown) => {
    const timing = message as RunTiming;
    add(timings, timing.key.slice(0, timing.key.lastIndexOf('.')), timing);
  };
  subscribe(RUN_TIMING_CHANNEL, record);
  const gcs = new Map<string, Interval[]>();
  const gcObserver = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const start = performance.timeOrigin + entry.startTime;
      add(gcs, gcKind(entry), [start, start + entry.duration]);
    }
  });
  gcObserver.observe({ entryTypes: ['gc' as EntryType] });
  const stalls: Interval[] = [];
  let last = Date.now();
  const ticker = setInterval(() => {
    const now = Date.now();
    if (now - last > STALL_MS) stalls.push([last, now]);
    last = now;
  }, 1);
  ticker.unref();
  return {
    stop() {
      unsubscribe(RUN_TIMING_CHANNEL, record);
      gcObserver.disconnect();
      clearInterval(ticker);
      if (timings.size === 0) return [];
      const gcPauses = [...gcs.values()].flat();
      return [
        ...[...timings].flatMap(([prefix, runs]) => describeRuns(prefix, runs, gcPauses, stalls)),
        describeGc(gcs),
        `stalls ≥ ${STALL_MS} ms: ${stalls.length}, ${Math.round(total(stalls))} ms in all`,
      ];
    },
  };
}

function describeRuns(prefix: string, runs: RunTiming[], gcs: Interval[], stalls: Interval[]): string[] {
  const late = (run: RunTiming) => run.startedAt - run.due;
  const parts = {
    'job headroom (due − arrival)': runs.map((run) => run.due - run.arrivedAt),
    'wake (claim sent − max(due, arrival))': runs.map(
      (run) => run.claimSentAt - Math.max(run.due, run.arrivedAt),
    ),
    'claim round trip': runs.map((run) => run.claimAnsweredAt - run.claimSentAt),
    'claim answer → handler': runs.map((run) => run.startedAt - run.claimAnsweredAt),
  };
  const slowest = [...runs]
    .sort((a, b) => late(a) - late(b))
    .slice(-Math.max(1, Math.floor(runs.length / 100)));
  const mean = (of: (run: RunTiming) => number) =>
    (slowest.reduce((sum, run) => sum + of(run), 0) / slowest.length).toFixed(1);
  const overlap = (run: RunTiming, intervals: Interval[]) =>
    total(intervals.map(([start, end]) => [Math.max(start, run.due), Math.min(end, run.startedAt)]));
  return [
    `run timings ${prefix}: ${runs.length} runs, late ${quantiles(runs.map(late))} ms, claimed again ${runs.filter((run) => run.claimCalls > 1).length}`,
    ...Object.entries(parts).map(([name, values]) => `  ${name}: ${quantiles(values)} ms`),
    // claimed ahead (claimAheadMs): the answer came with time left, so after the due the run waited for
    // the local wake alone, not for the round trip as well
    `  claim answered before the due (leftMs > 0): ${runs.filter((run) => run.leftMs > 0).length} of ${runs.length}; leftMs ${quantiles(runs.map((run) => run.leftMs))}`,
    `  slowest 1% (${slowest.length}), mean ms: late ${mean(late)} = job after due ${mean((run) => Math.max(0, run.arrivedAt - run.due))}` +
      ` + wake ${mean((run) => run.claimSentAt - Math.max(run.due, run.arrivedAt))}` +
      ` + claim round trip ${mean((run) => run.claimAnsweredAt - run.claimSentAt)}` +
      ` + answer → handler ${mean((run) => run.startedAt - run.claimAnsweredAt)};` +
      ` claimed again ${slowest.filter((run) => run.claimCalls > 1).length};` +
      ` overlapped by GC ${mean((run) => overlap(run, gcs))}, by stalls ${mean((run) => overlap(run, stalls))}`,
  ];
}

function describeGc(gcs: Map<string, Interval[]>): string {
  const each = [...gcs].map(([kind, pauses]) => {
    const lengths = pauses.map(([start, end]) => end - start);
    return `${pauses.length} ${kind} (pause ${quantiles(lengths)} ms, ${Math.round(total(pauses))} ms in all)`;
  });
  return `GC: ${each.join('; ') || 'none'}`;
}

function quantiles(values: number[]): string {
  const sorted = Float64Array.from(values).sort();
  const at = (level: number) => Math.round(percentile(Array.from(sorted), level) * 10) / 10;
  return `min ${at(0)} p50 ${at(50)} p99 ${at(99)} max ${at(100)}`;
}

/** Summed length of intervals (an empty or reversed one counts 0). */
function total(intervals: Interval[]): number {
  return intervals.reduce((sum, [start, end]) => sum + Math.max(0, end - start), 0);
}

function add<T>(lists: Map<string, T[]>, key: string, item: T): void {
  const list = lists.get(key);
  if (list) list.push(item);
  else lists.set(key, [item]);
}
