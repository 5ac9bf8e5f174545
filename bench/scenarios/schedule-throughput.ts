import { row, timesBullmq } from '../report';
import { ratePerSecond } from '../stats';
import { oneShots, onCleanRedis, scheduleInBatches, type Scenario } from './harness';

const HOUR_MS = 3_600_000;

/** 1. How fast one client schedules one-shots: `scheduleMany` vs `addBulk`, in sequential batches. */
export const scheduleThroughput: Scenario = async (context) => {
  const { scheduleCount, batchSize } = context.sizes;
  const rates: Record<string, number> = {};
  for (const factory of context.contenders) {
    await onCleanRedis(context, factory, async (contender) => {
      const timers = oneShots('bench.sched.', scheduleCount, () => Date.now() + HOUR_MS);
      const started = performance.now();
      await scheduleInBatches(contender, timers, batchSize);
      rates[contender.name] = ratePerSecond(scheduleCount, performance.now() - started);
      context.log(`${contender.name}: ${Math.round(rates[contender.name])} timers/s`);
    });
  }
  const scenario = `1. schedule ${scheduleCount.toLocaleString('en-US')} one-shots (batches of ${batchSize})`;
  return { rows: [row(scenario, 'timers/s', rates, timesBullmq(4))] };
};
