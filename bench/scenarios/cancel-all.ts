import { atMostTimesBullmq, row } from '../report';
import { oneShots, onCleanRedis, scheduleInBatches, type Scenario } from './harness';

const HOUR_MS = 3_600_000;
const TARGET_COUNT = 100_000;
const SCOPE = 'bench.ca.';

/**
 * 6. `cancelAll(scope)` of N pending timers. Raw BullMQ has no cancel-by-prefix; its nearest equivalent,
 * draining the whole queue of waiting and delayed jobs, is shown beside it.
 */
export const cancelAll: Scenario = async (context) => {
  const { cancelAllCount: count, batchSize } = context.sizes;
  const elapsed: Record<string, number> = {};
  const cancelled: Record<string, number> = {};
  for (const factory of context.contenders) {
    await onCleanRedis(context, factory, async (contender) => {
      await scheduleInBatches(
        contender,
        oneShots(SCOPE, count, () => Date.now() + HOUR_MS),
        batchSize,
      );
      const started = performance.now();
      cancelled[contender.name] = await contender.cancelAll(SCOPE);
      elapsed[contender.name] = performance.now() - started;
      context.log(
        `${contender.name}: ${cancelled[contender.name]} cancelled in ${Math.round(elapsed[contender.name])} ms`,
      );
    });
  }
  const scenario = `6. cancelAll(scope) of ${count.toLocaleString('en-US')} (BullMQ: queue.drain)`;
  const note =
    count === TARGET_COUNT ? undefined : `n/a: target is for ${TARGET_COUNT.toLocaleString('en-US')}`;
  return {
    rows: [row(scenario, 'ms', elapsed, atMostTimesBullmq(0.5), note)],
    details: { cancelled },
  };
};
