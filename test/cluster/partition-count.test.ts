import { repartition } from '@sundial/redis';
import { clusterEnv, spawnApp, spawnRefused } from '@sundial/testing/harness';
import { useAppsOnPrivateRedis } from './app-fixture';

/** A process started with another partition count than the data's refuses to start, saying how to fix it. */
describe('cluster: the partition count is part of the data', () => {
  const { redis, apps } = useAppsOnPrivateRedis();
  // The old-count processes look at the count every 250 ms, not 5 s: the second test waits for their exits.
  const env = (partitions: string) =>
    clusterEnv(redis().url, { SUNDIAL_PARTITIONS: partitions, SUNDIAL_LAYOUT_WATCH_MS: '250' });

  it('starts the first process, and refuses a worker with another SUNDIAL_PARTITIONS', async () => {
    apps.push(await spawnApp('scheduler', 'scheduler', env('2')));
    // The two workers start side by side (once the scheduler wrote the count): neither changes it.
    const [refused, worker] = await Promise.all([
      spawnRefused('worker', 'worker', env('4')),
      spawnApp('worker', 'worker-2', env('2')),
    ]);
    apps.push(worker);
    expect(refused).toContain('exited at start');
    expect(refused).toContain('spread over 2 partitions, and this process was started with 4');
    expect(refused).toContain('SUNDIAL_PARTITIONS=2');
  }, 60_000);

  // A repartition replaces the count the running processes have: each shuts down by itself. Its lines
  // named a SIGTERM nobody sent (the process raised it at itself); they name the repartition.
  it('a repartition stops the old-count processes; their shutdown lines name it, not a signal', async () => {
    expect(apps.map((app) => app.name)).toEqual(['scheduler', 'worker-2']); // the first test's
    await repartition({ connection: redis().url, to: 3 });
    const ends = await Promise.all(apps.map((app) => app.exited));
    expect(ends.map((end) => end.code)).toEqual(apps.map(() => 0));
    for (const app of apps) {
      const lines = app.lines.flatMap((line) => {
        try {
          return [JSON.parse(line) as { msg: string; reason?: string; signal?: string }];
        } catch {
          return [];
        }
      });
      // Keys moved to another count are no loss of data (docs/spec.md §4.1).
      expect(lines.filter((line) => line.msg.startsWith("Redis lost Sundial's data"))).toEqual([]);
      const shutdown = lines.filter((line) => /^(shutting down|shut down cleanly)$/.test(line.msg));
      expect({
        app: app.name,
        shutdown: shutdown.map(({ msg, reason, signal }) => ({ msg, reason, signal })),
      }).toEqual({
        app: app.name,
        shutdown: [
          { msg: 'shutting down', reason: 'repartition', signal: undefined },
          { msg: 'shut down cleanly', reason: 'repartition', signal: undefined },
        ],
      });
    }
  }, 60_000);
});
