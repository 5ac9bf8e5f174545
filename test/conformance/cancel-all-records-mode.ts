import type { RedisTimers } from '@sundial/redis';

/**
 * How the Redis backend's `RedisTimers` cancel all, from SUNDIAL_CANCEL_ALL_RECORDS: `1` through scope
 * records (docs/design.md "The cancelAll scope record"), so the suites run both ways; `unswept` so too,
 * with no sweep after the call, so every later read and write meets the marked keys (then only the cancel
 * tests that await `cancelled` events fail, two or three: those events are the sweep's); unset, key by key.
 */
export function cancelAllRecordsMode(): { cancelAllRecords: boolean; opened(timers: RedisTimers): void } {
  const mode = process.env.SUNDIAL_CANCEL_ALL_RECORDS;
  return {
    cancelAllRecords: mode === '1' || mode === 'unswept',
    opened(timers) {
      if (mode === 'unswept')
        (timers as unknown as { sweeps: { start(): void } }).sweeps.start = () => undefined;
    },
  };
}
