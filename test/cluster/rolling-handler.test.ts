import { RedisTimers } from '@sundial/redis';
import { clusterEnv, readRuns, spawnApp, waitFor } from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { useAppsOnPrivateRedis } from './app-fixture';

/**
 * docs/spec.md §3.2, the stock apps as processes: a worker of an older build (no SUNDIAL_HANDLERS_MODULE:
 * the built-ins only) beside a newer one that has the `record` handler. Every run of `record` runs once,
 * on the newer worker; none fails.
 */
describe('cluster: a worker lacking a handler passes its runs to one that has it', () => {
  const { redis, apps } = useAppsOnPrivateRedis();

  it('one-shots of a handler only the newer worker has all run there, once each, none failed', async () => {
    const env = clusterEnv(redis().url);
    const older = { ...env };
    delete older.SUNDIAL_HANDLERS_MODULE;
    const started = await Promise.all([
      spawnApp('scheduler', 'scheduler', env),
      spawnApp('worker', 'older', older),
      spawnApp('worker', 'newer', env),
    ]);
    apps.push(...started);
    const [, olderWorker, newer] = started;
    const timers = new RedisTimers({ connection: redis().url, partitions: 2 });
    const record = new Redis(`${redis().url}/1`);
    try {
      const keys = Array.from({ length: 30 }, (_, i) => `r-${i}`);
      for (const [i, key] of keys.entries())
        await timers.schedule({ key, handler: 'record', delay: 500 + 40 * i, removeOnComplete: false });
      const runs = await waitFor(
        async () => {
          const all = await readRuns(record);
          return all.length >= keys.length && all;
        },
        { timeoutMs: 20_000, what: 'every run' }, // deadline
      );
      expect(runs.map((run) => run.key).sort()).toEqual([...keys].sort());
      expect(new Set(runs.map((run) => run.pid))).toEqual(new Set([newer.pid]));
      for (const run of runs) expect(run.at).toBeGreaterThanOrEqual(run.due);
      // A handler records its run before its completion reaches the row: the last rows may still be running.
      const rows = await waitFor(
        async () => {
          const all = await Promise.all(keys.map((key) => timers.get(key)));
          return all.every((row) => row?.status !== 'running') && all;
        },
        { timeoutMs: 5_000, what: 'every completion' }, // deadline
      );
      expect(rows.map((row) => [row?.status, row?.runCount])).toEqual(keys.map(() => ['completed', 1]));
      expect(olderWorker.lines.join('\n')).not.toContain('unknown-handler');
    } finally {
      record.disconnect();
      await timers.dispose();
    }
  }, 120_000);
});
