import { atMost, row } from '../report';
import { leadTimeMs, oneShots, scheduleInBatches, sleepUntil, withWorkers, type Scenario } from './harness';

const DUE_SPAN_MS = 1_000;
const DRAIN_DEADLINE_MS = 60_000;
/** Lets the last completions (which follow the reported handler starts) land before counting. */
const SETTLE_MS = 500;
/**
 * The bench's own bookkeeping, not the contender's: RESETSTAT itself (INFO commandstats is not in its own
 * reply). An INFO or CONFIG a contender sends, or runs inside a script, counts.
 */
const ADMIN_COMMANDS = new Set(['config|resetstat']);

/**
 * 7. Redis commands per fired timer: every command Redis executed (including those called inside Lua
 * scripts) from CONFIG RESETSTAT before scheduling N timers until all of them ran, divided by N. It includes
 * whatever the workers and services do meanwhile (polling, lock renewal), as in production.
 */
export const commandsPerFire: Scenario = async (context) => {
  const { commandsCount: count, batchSize } = context.sizes;
  const perFire: Record<string, number> = {};
  const breakdown: Record<string, Record<string, number>> = {};
  for (const factory of context.contenders) {
    await withWorkers(context, factory, 1, async (contender, fleet) => {
      await context.redis.resetStats();
      const firstDue = Date.now() + leadTimeMs(count);
      const timers = oneShots('bench.cmd.', count, (i) => firstDue + Math.floor((i * DUE_SPAN_MS) / count));
      await scheduleInBatches(contender, timers, batchSize);
      await fleet.waitForRuns(count, Date.now() + DRAIN_DEADLINE_MS);
      await sleepUntil(Date.now() + SETTLE_MS);
      const calls = await context.redis.commandCalls();
      const counted = Object.entries(calls).filter(([command]) => !ADMIN_COMMANDS.has(command));
      perFire[contender.name] = counted.reduce((sum, [, n]) => sum + n, 0) / count;
      breakdown[contender.name] = Object.fromEntries(counted.sort(([, a], [, b]) => b - a));
      const top = Object.entries(breakdown[contender.name])
        .slice(0, 12)
        .map(([command, n]) => `${command} ${(n / count).toFixed(2)}`);
      context.log(
        `${contender.name}: ${perFire[contender.name].toFixed(1)} commands per fired timer (${top.join(', ')})`,
      );
    });
  }
  return {
    rows: [
      row(
        `7. Redis commands per fired timer (${count.toLocaleString('en-US')} fired)`,
        'commands',
        perFire,
        atMost(6, ''),
      ),
    ],
    details: breakdown,
  };
};
