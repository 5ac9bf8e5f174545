import type { Contender, ContenderName, OneShot } from '../contenders/contender';
import {
  QUANTILE_LEVELS,
  atMost,
  atMostTimesBullmq,
  none,
  row,
  type LatenessSeries,
  type Target,
} from '../report';
import { percentile, summarize, type Summary } from '../stats';
import { diagnosed, duplicateRuns, oneShots, sleepUntil, withWorkers, type Scenario } from './harness';

const SLICE_MS = 100;
/** Each slice of timers is scheduled this long before its first due, so scheduling is never the bottleneck. */
const SCHEDULE_AHEAD_MS = 1_000;
const START_DELAY_MS = 1_500;
const DRAIN_MS = 10_000;
const WORKER_PROCESSES = 1;

const P99_TARGETS: Record<number, Target> = {
  1_000: atMostTimesBullmq(0.05, '≤ 5 ms idle'),
  5_000: atMost(20, 'ms'),
};

type LatenessSummary = Summary & { early: number };

/**
 * 2. Fire lateness (handler start − due) while timers fall due at a steady rate: each 100 ms slice is
 * scheduled 1 s ahead, so the contender's fire path is measured while it is also taking new timers.
 */
export const lateness: Scenario = async (context) => {
  const { latenessRates, latenessWindowMs } = context.sizes;
  const series: LatenessSeries[] = [];
  const details: Record<string, unknown> = {};
  const measured = new Map<number, Partial<Record<ContenderName, LatenessSummary>>>();
  for (const factory of [...context.contenders, ...context.variants]) {
    // One set of processes per contender serves every rate: each rate has its own keys, so none needs a flush.
    await withWorkers(context, factory, WORKER_PROCESSES, async (contender, fleet) => {
      for (const rate of latenessRates) {
        fleet.clearRuns();
        const prefix = `bench.late.${rate}.`;
        const total = Math.round((rate * latenessWindowMs) / 1_000);
        const firstDue = Date.now() + START_DELAY_MS;
        const timers = oneShots(prefix, total, (i) => firstDue + Math.floor((i * 1_000) / rate));
        const minHeadroomMs = await diagnosed(context, `${contender.name} @ ${rate}/s`, async () => {
          const headroom = await feed(contender, timers);
          await fleet.waitForRuns(total, firstDue + latenessWindowMs + DRAIN_MS);
          return headroom;
        });
        const runs = fleet.runs.filter(([key]) => key.startsWith(prefix));
        const samples = runs.map(([, due, start]) => start - due);
        const summary = { ...summarize(samples), early: samples.filter((late) => late < 0).length };
        measured.set(rate, { ...measured.get(rate), [contender.name]: summary });
        const sorted = Array.from(Float64Array.from(samples).sort());
        series.push({
          contender: contender.name,
          rate,
          quantiles: QUANTILE_LEVELS.map((level) => percentile(sorted, level)),
        });
        details[`${contender.name}@${rate}/s`] = {
          scheduled: total,
          ran: runs.length,
          missing: Math.max(0, total - runs.length),
          duplicates: duplicateRuns(runs),
          minHeadroomMs,
          ...summary,
        };
        context.log(
          `${contender.name} @ ${rate}/s: p50 ${summary.p50} ms, p99 ${summary.p99} ms, max ${summary.max} ms, ` +
            `early ${summary.early}, ran ${runs.length}/${total}, scheduling headroom ≥ ${minHeadroomMs} ms`,
        );
      }
    });
  }
  const rows = latenessRates.flatMap((rate) => {
    const scenario = `2. fire lateness @ ${rate.toLocaleString('en-US')}/s`;
    const pick = (field: keyof LatenessSummary, sundial: ContenderName = 'sundial') => ({
      sundial: measured.get(rate)?.[sundial]?.[field],
      bullmq: measured.get(rate)?.bullmq?.[field],
    });
    const bare =
      measured.get(rate)?.['sundial-runner'] === undefined
        ? []
        : [
            row(`${scenario}, bare TimerRunner (no Nest)`, 'p50 (ms)', pick('p50', 'sundial-runner')),
            row(`${scenario}, bare TimerRunner (no Nest)`, 'p99 (ms)', pick('p99', 'sundial-runner')),
          ];
    return [
      row(scenario, 'p50 (ms)', pick('p50')),
      row(scenario, 'p99 (ms)', pick('p99'), P99_TARGETS[rate]),
      row(scenario, 'max (ms)', pick('max')),
      row(scenario, 'runs started early', pick('early'), none),
      ...bare,
    ];
  });
  return { rows, lateness: series, details };
};

/**
 * Schedules the timers (ascending due) slice by slice, each 100 ms slice SCHEDULE_AHEAD_MS before it is due.
 * Returns the least headroom seen: how long before its first due a slice was acknowledged. Negative means
 * scheduling, not firing, made those timers late — the details show it so it is not mistaken for lateness.
 */
async function feed(contender: Contender, timers: readonly OneShot[]): Promise<number> {
  let minHeadroomMs = Infinity;
  let next = 0;
  for (let sliceEnd = timers[0].dueAt + SLICE_MS; next < timers.length; sliceEnd += SLICE_MS) {
    const sliceStart = next;
    while (next < timers.length && timers[next].dueAt < sliceEnd) next++;
    await sleepUntil(sliceEnd - SLICE_MS - SCHEDULE_AHEAD_MS);
    if (next === sliceStart) continue;
    await contender.scheduleMany(timers.slice(sliceStart, next));
    minHeadroomMs = Math.min(minHeadroomMs, timers[sliceStart].dueAt - Date.now());
  }
  return minHeadroomMs;
}
