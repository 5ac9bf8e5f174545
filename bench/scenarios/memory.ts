import { atMost, row } from '../report';
import { oneShots, onCleanRedis, scheduleInBatches, type Scenario } from './harness';

const MONTH_MS = 30 * 86_400_000;
/** The size the target is set for; smaller (quick) runs report without judging it. */
const TARGET_COUNT = 1_000_000;

/**
 * 5. Memory per pending timer: Redis `used_memory` delta over N far-future timers (Sundial keeps them as rows;
 * raw BullMQ as delayed jobs), divided by N.
 */
export const memoryPerTimer: Scenario = async (context) => {
  const { memoryCount: count, batchSize } = context.sizes;
  const bytes: Record<string, number> = {};
  for (const factory of context.contenders) {
    await onCleanRedis(context, factory, async (contender) => {
      const before = await context.redis.usedMemory();
      const dueAt = Date.now() + MONTH_MS;
      await scheduleInBatches(
        contender,
        oneShots('bench.mem.', count, () => dueAt),
        batchSize,
      );
      bytes[contender.name] = ((await context.redis.usedMemory()) - before) / count;
      context.log(`${contender.name}: ${Math.round(bytes[contender.name])} B per pending timer`);
    });
  }
  const scenario = `5. memory at ${count.toLocaleString('en-US')} pending`;
  const note =
    count === TARGET_COUNT ? undefined : `n/a: target is for ${TARGET_COUNT.toLocaleString('en-US')}`;
  return { rows: [row(scenario, 'bytes per pending timer', bytes, atMost(400, 'B'), note)] };
};
