import type { SundialLogger } from '@sundial/core';
import { Dispatcher, type PartitionedOptions, RedisTimers, TimerRunner } from '@sundial/redis';

/** What a start logs, and nothing else read. */
export function recordingLogger(): SundialLogger & { lines: string[] } {
  const lines: string[] = [];
  const record = (message: string) => void lines.push(message);
  return { lines, error: record, warn: record, info: record, debug: () => undefined };
}

/** A library host's parts on `shared` (the client with a logger of its own): nothing started yet. */
export interface LibraryHost {
  runner: TimerRunner;
  dispatcher: Dispatcher;
  timers: RedisTimers;
  /** the keys the runner's `note` handler ran */
  runs: string[];
  close(): Promise<void>;
}

export function libraryHost(shared: PartitionedOptions & { logger: SundialLogger }): LibraryHost {
  const runs: string[] = [];
  const runner = new TimerRunner({
    ...shared,
    handlers: { note: async (_, ctx) => void runs.push(ctx.key) },
  });
  const dispatcher = new Dispatcher(shared);
  const timers = new RedisTimers({ ...shared, logger: recordingLogger() });
  return {
    runner,
    dispatcher,
    timers,
    runs,
    async close() {
      await timers.dispose();
      await dispatcher.close();
      await runner.close();
    },
  };
}
