import type { Timer, TimerSpec } from '@sundial/core';
import type { RedisTimers } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';

/**
 * `perDelivery` one-shots of each delivery mode, `<prefix><delivery>:<n>`, whose first run (handler `slow`)
 * outlasts the test and whose re-run after a lost worker is quick: runs to cut short by killing their worker.
 */
export function midRunSpecs(prefix: string, perDelivery: number): TimerSpec[] {
  return (['at-least-once', 'at-most-once'] as const).flatMap((delivery) =>
    Array.from({ length: perDelivery }, (_, n) => ({
      key: `${prefix}${delivery}:${n}`,
      handler: 'slow',
      payload: { ms: 120_000, rerunMs: 50 },
      delay: 100,
      delivery,
      removeOnComplete: false,
    })),
  );
}

/** Waits until every key is settled (completed or failed; they are kept: removeOnComplete false). */
export function settledTimers(client: RedisTimers, keys: string[]): Promise<Timer[]> {
  return waitFor(
    async () => {
      const timers = await Promise.all(keys.map((key) => client.get(key)));
      return (
        timers.every((timer) => timer?.status === 'completed' || timer?.status === 'failed') &&
        (timers as Timer[])
      );
    },
    { timeoutMs: 30_000, intervalMs: 100, what: `${keys.length} timers to settle` },
  );
}
