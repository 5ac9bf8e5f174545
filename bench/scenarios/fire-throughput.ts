import type { ContenderName } from '../contenders/contender';
import { row, timesBullmq, type Row } from '../report';
import {
  diagnosed,
  leadTimeMs,
  oneShots,
  scheduleInBatches,
  sustainedRate,
  withWorkers,
  type Scenario,
} from './harness';

const WORKER_COUNTS = [1, 2];
/**
 * All timers fall due within a span of 10 µs a timer (500 ms at full size's 50,000): a due rate of
 * 100,000/s, far more than either side can run, so a backlog forms. A fixed 500 ms made the quick size's
 * 5,000 a due rate of 10,000/s, which a worker that keeps up runs at that rate: the row then measured the
 * schedule, not the workers (Sundial 10.0k runs/s on time against BullMQ catching up at 12k).
 */
const DUE_SPAN_MS_PER_TIMER = 0.01;
const DRAIN_DEADLINE_MS = 120_000;

/**
 * 3. Maximum sustained fire throughput: a backlog of timers falls due at once and the workers drain it.
 * Sustained = the middle 80 % of runs over the time they took (10th to 90th percentile start), which leaves
 * out the ramp-up and the tail.
 */
export const fireThroughput: Scenario = async (context) => {
  const { throughputCount: count, batchSize } = context.sizes;
  const rows: Row[] = [];
  const details: Record<string, unknown> = {};
  for (const processes of WORKER_COUNTS) {
    const rates: Partial<Record<ContenderName, number>> = {};
    for (const factory of [...context.contenders, ...context.variants]) {
      await withWorkers(context, factory, processes, async (contender, fleet) => {
        const firstDue = Date.now() + leadTimeMs(count);
        const timers = oneShots(
          'bench.tput.',
          count,
          (i) => firstDue + Math.floor(i * DUE_SPAN_MS_PER_TIMER),
        );
        await scheduleInBatches(contender, timers, batchSize);
        const scheduledLate = Date.now() > firstDue;
        const label = `${contender.name}×${processes}`;
        await diagnosed(context, label, () => fleet.waitForRuns(count, Date.now() + DRAIN_DEADLINE_MS));
        const rate = sustainedRate(fleet.runs);
        rates[contender.name] = rate;
        details[`${contender.name}×${processes}`] = {
          fired: count,
          ran: fleet.runs.length,
          runsPerSecond: rate,
          scheduledLate,
        };
        context.log(`${contender.name}, ${processes} worker process(es): ${Math.round(rate)} runs/s`);
      });
    }
    const scenario = `3. fire throughput, ${processes} worker process${processes === 1 ? '' : 'es'}`;
    rows.push(row(scenario, 'runs/s', rates, timesBullmq(2.5)));
    if (rates['sundial-runner'] !== undefined) {
      const bare = { sundial: rates['sundial-runner'], bullmq: rates.bullmq };
      rows.push(row(`${scenario}, bare TimerRunner (no Nest)`, 'runs/s', bare));
    }
  }
  return { rows, details };
};
