import { type LogFields, silentLogger } from '@sundial/core';
import { Dispatcher, TimerRunner } from '@sundial/redis';
import { type RedisCluster, startRedisCluster, waitFor } from '@sundial/testing/harness';

const PARTITIONS = 8;
/** Short for the test; the default is 15 s (DEFAULT_DISPATCHER_GRACE_MS), looks every third of it. */
const GRACE_MS = 600;

/**
 * docs/spec.md §4.2 on a real 3-primary Redis Cluster: the partitions spread over the primaries, and
 * the announcements of dispatchers serving some of them are one key (one slot), written and read with
 * single-key commands: the runner names the partitions none serves.
 */
describe('Redis Cluster: runners name the partitions no dispatcher serves', () => {
  let cluster: RedisCluster;
  const closers: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  }, 60_000);
  afterAll(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await cluster?.stop();
  });

  it('dispatchers of 0-3 and 3-5: one warn naming 6,7; one of 6,7 started: the info line', async () => {
    const shared = { connection: cluster.url, prefix: 'presence', partitions: PARTITIONS };
    const dispatcher = async (serve: number[]): Promise<void> => {
      const started = new Dispatcher({ ...shared, serve, logger: silentLogger });
      closers.push(() => started.close());
      await started.start();
    };
    const lines: { level: string; message: string; fields: LogFields }[] = [];
    const keep =
      (level: string) =>
      (message: string, fields: LogFields = {}) => {
        if (/dispatcher/i.test(message)) lines.push({ level, message, fields });
      };
    await dispatcher([0, 1, 2, 3]);
    await dispatcher([3, 4, 5]);
    const runner = new TimerRunner({
      ...shared,
      handlers: {},
      dispatcherGraceMs: GRACE_MS,
      logger: { ...silentLogger, warn: keep('warn'), info: keep('info') },
    });
    closers.push(() => runner.close(0));
    await runner.start();
    expect(runner.keys.tagging).toBe('spread');

    await waitFor(() => lines.length > 0, { what: 'the warn line' });
    expect(lines[0]).toMatchObject({
      level: 'warn',
      message: expect.stringContaining(
        "No Sundial dispatcher serves partitions 6,7 (of 8) of prefix 'presence'",
      ),
      fields: { partitions: [6, 7] },
    });

    await dispatcher([6, 7]);
    await waitFor(() => lines.length > 1, { what: 'the info line' });
    expect(lines.map((line) => line.level)).toEqual(['warn', 'info']);
  });
});
