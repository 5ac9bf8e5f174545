import { silentLogger, type TimerContext, type TimerEvent } from '@sundial/core';
import {
  closeRedis,
  Dispatcher,
  FireCommands,
  keySlot,
  loadFunctions,
  openRedis,
  RedisTimers,
  TimerRunner,
} from '@sundial/redis';
import Redis from 'ioredis';
import { type RedisCluster, startRedisCluster, waitFor } from '@sundial/testing/harness';

const PARTITIONS = 8;
const quiet = silentLogger;

/**
 * What spans partitions, on a real 3-primary Redis Cluster: events and aborts published by a script on
 * one primary reach a subscriber connected to another, and list (with its cursor), snapshot and
 * cancelAll see the partitions of every primary.
 */
describe('Redis Cluster: operations across partitions and primaries', () => {
  let cluster: RedisCluster;
  let timers: RedisTimers;
  let prefixes = 0;

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  }, 60_000);
  beforeEach(() => {
    timers = new RedisTimers({ connection: cluster.url, prefix: `rc${++prefixes}`, partitions: PARTITIONS });
  });
  afterEach(() => timers.dispose());
  afterAll(() => cluster?.stop());

  const keysInEveryPartition = () => {
    const keys: string[] = [];
    for (let n = 0; new Set(keys.map((key) => timers.keys.partitionOf(key))).size < PARTITIONS; n++) {
      keys.push(`job:${n}`);
    }
    return keys;
  };

  it('spreads the partitions over all three primaries', async () => {
    const owners = await Promise.all(
      timers.keys.all().map((n) => cluster.nodeOfSlot(keySlot(timers.keys.tag(n).slice(1, -1)))),
    );
    expect(new Set(owners.map((node) => node.port)).size).toBe(3);
  });

  it('delivers the events of every partition to one subscriber', async () => {
    const seen: TimerEvent[] = [];
    timers.on('scheduled', (event) => void seen.push(event));
    const keys = keysInEveryPartition();
    await timers.scheduleMany(keys.map((key) => ({ key, handler: 'h', delay: '1h' })));
    await waitFor(() => seen.length === keys.length, { what: `${keys.length} scheduled events` });
    expect(seen.map((event) => event.key).sort()).toEqual([...keys].sort());
  });

  it('answers a repeated scheduleMany with its first answer, on every primary (request ids on Cluster tags)', async () => {
    const keys = keysInEveryPartition();
    const specs = keys.map((key) => ({ key, handler: 'h', delay: '1h' as const }));
    const first = await timers.scheduleMany(specs, { requestId: 'many-1' });
    const again = await timers.scheduleMany(specs, { requestId: 'many-1' });
    expect(again.map((timer) => [timer.key, timer.id, timer.version])).toEqual(
      first.map((timer) => [timer.key, timer.id, timer.version]),
    );
  });

  it('lists page by page, snapshots and cancels all over every partition', async () => {
    const keys = keysInEveryPartition();
    const created = await timers.scheduleMany(keys.map((key) => ({ key, handler: 'h', delay: '1h' })));
    const listed: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await timers.list({ limit: 3, cursor });
      listed.push(...page.items.map((timer) => timer.key));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    // in key order across the partitions of every primary
    expect(listed).toEqual([...keys].sort());
    // a dueBefore page reads its rows on every primary too (one pipeline per partition)
    const due = await timers.list({ dueBefore: Date.now() + 7_200_000, limit: 1000 });
    expect(due.items.map((timer) => timer.key).sort()).toEqual([...keys].sort());
    expect((await timers.snapshot()).sort()).toEqual(created.map((timer) => timer.id).sort());
    expect(await timers.cancelAll()).toBe(keys.length);
    expect(await timers.snapshot()).toEqual([]);
  });

  it('loads the hot scripts’ functions into every primary, and again into each after they are flushed', async () => {
    const redis = openRedis(cluster.url);
    const nodes = cluster.nodes.map((node) => new Redis(node.url));
    const libraries = () =>
      Promise.all(nodes.map(async (node) => ((await node.call('FUNCTION', 'LIST')) as unknown[][]).length));
    try {
      await loadFunctions(redis);
      expect(await libraries()).toEqual([11, 11, 11]); // the fire path's 3 and the client's 8 writes
      await timers.connect(); // the client loads them at start, not again at its writes
      await Promise.all(nodes.map((node) => node.call('FUNCTION', 'FLUSH')));
      const keys = keysInEveryPartition();
      await timers.scheduleMany(keys.map((key) => ({ key, handler: 'h', delay: 0 })));
      const commands = new FireCommands(redis, timers.keys);
      const taken = await Promise.all(timers.keys.all().map((n) => commands.takeDue(n, 100, 0)));
      const refs = taken.flatMap(({ job }) => job?.timers.map((ref) => ref.key) ?? []);
      expect(refs.sort()).toEqual([...keys].sort());
      // schedule's library (its calls went to every primary), then take-due's, each loaded into all
      expect(await libraries()).toEqual([2, 2, 2]);
    } finally {
      await Promise.all(nodes.map((node) => node.quit()));
      await closeRedis(redis);
    }
  });

  it('aborts a running handler from a cancel, whichever primary holds its partition', async () => {
    const shared = { connection: cluster.url, prefix: timers.keys.prefix, partitions: PARTITIONS };
    const started = new Set<string>();
    const aborted = new Set<string>();
    const runner = new TimerRunner({
      ...shared,
      logger: quiet,
      handlers: {
        hold: (_payload: unknown, ctx: TimerContext) =>
          new Promise<void>((resolve) => {
            started.add(ctx.key);
            ctx.signal.addEventListener('abort', () => {
              aborted.add(ctx.key);
              resolve();
            });
          }),
      },
    });
    const dispatcher = new Dispatcher({ ...shared, logger: quiet });
    try {
      await runner.start();
      await dispatcher.start();
      const keys = keysInEveryPartition();
      await timers.scheduleMany(keys.map((key) => ({ key, handler: 'hold', delay: 200 })));
      await waitFor(() => started.size === keys.length, { what: 'every timer running' });
      for (const key of keys) expect(await timers.cancel(key)).toBe(true);
      await waitFor(() => aborted.size === keys.length, { what: 'every run aborted' });
    } finally {
      await dispatcher.close();
      await runner.close(1_000);
    }
  }, 30_000);
});
