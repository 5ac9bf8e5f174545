import { silentLogger, type TimerContext, type TimerSpec } from '@sundial/core';
import { Dispatcher, RedisTimers, repartition, SundialKeys, TimerRunner } from '@sundial/redis';
import { type RedisCluster, startRedisCluster, waitFor } from '@sundial/testing/harness';
import { Redis } from 'ioredis';

interface Run {
  id: string;
  version: number;
  due: number;
  at: number;
}

/**
 * Repartition on a real 3-primary Redis Cluster (issue 12 §4), where a partition's hash tag depends on
 * the count, so nearly every key moves between primaries: 3,000 timers, 2 → 6 partitions while an
 * in-process dispatcher and runner of each count fire them. Every (id, version) runs once, none early.
 */
describe('Redis Cluster: repartition while timers fire', () => {
  let cluster: RedisCluster;
  const closing: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    cluster = await startRedisCluster(3);
  }, 60_000);
  afterAll(async () => {
    for (const close of closing.reverse()) await close();
    await cluster?.stop();
  });

  it('moves every timer to the primaries of its new partition and runs each (id, version) once', async () => {
    const runs: Run[] = [];
    const record = (_payload: unknown, ctx: TimerContext) => {
      runs.push({ id: ctx.id, version: ctx.version, due: ctx.due, at: Date.now() });
    };
    const fire = async (partitions: number) => {
      const shared = { connection: cluster.url, prefix: 'rpc', partitions, logger: silentLogger };
      const dispatcher = new Dispatcher(shared);
      const runner = new TimerRunner({ ...shared, handlers: { record } });
      await dispatcher.start();
      await runner.start();
      closing.push(
        () => dispatcher.close(),
        () => runner.close(1000),
      );
    };
    const old = new RedisTimers({ connection: cluster.url, prefix: 'rpc', partitions: 2 });
    closing.push(() => old.dispose());
    await fire(2);

    const specs: TimerSpec[] = Array.from({ length: 3000 }, (_, n): TimerSpec => {
      const key = `k:${n}`;
      if (n < 300) return { key, handler: 'record', delay: '1h' };
      if (n < 2000) return { key, handler: 'record', delay: 1_500 + ((n * 7919) % 5_000) };
      if (n < 2500) return { key, handler: 'record', every: 1_000, maxRuns: 3 };
      return { key, handler: 'record', every: 1_000, maxRuns: 3, awaitTask: false };
    });
    const created = await old.scheduleMany(specs);
    await waitFor(() => runs.length > 50, { timeoutMs: 20_000, what: 'the first runs' });

    let joined: Promise<void> | undefined;
    const result = await repartition({
      connection: cluster.url,
      prefix: 'rpc',
      to: 6,
      onProgress: ({ phase }) => {
        if (phase === 'fenced') joined ??= fire(6);
      },
    });
    await joined;
    expect(result).toMatchObject({ from: 2, to: 6 });
    expect(result.moved).toBeGreaterThan(0);

    const later = created.slice(0, 300);
    const expected = created.slice(300).reduce((sum, timer) => sum + (timer.kind === 'once' ? 1 : 3), 0);
    await waitFor(() => runs.length >= expected, {
      timeoutMs: 60_000,
      intervalMs: 100,
      what: `${expected} runs`,
    });
    const seen = new Set<string>();
    for (const run of runs) {
      expect({ run, early: run.at < run.due }).toEqual({ run, early: false });
      expect({ run, twice: seen.has(`${run.id}/${run.version}`) }).toEqual({ run, twice: false });
      seen.add(`${run.id}/${run.version}`);
    }
    expect(runs).toHaveLength(expected);

    // The rows still pending are under the new tags only, on all three primaries, and found by id and key.
    const from = new SundialKeys('rpc', 2, 'spread');
    const to = new SundialKeys('rpc', 6, 'spread');
    const tagsByNode = await Promise.all(
      cluster.nodes.map(async (node) => {
        const redis = new Redis(node.url);
        const names = await redis.keys('rpc:*:t:*');
        redis.disconnect();
        return new Set(names.map((name) => name.split(':')[1]));
      }),
    );
    const newTags = new Set(to.all().map((n) => to.tag(n)));
    const oldOnly = from
      .all()
      .map((n) => from.tag(n))
      .filter((tag) => !newTags.has(tag));
    expect(tagsByNode.every((tags) => tags.size > 0)).toBe(true);
    expect(tagsByNode.flatMap((tags) => [...tags]).filter((tag) => oldOnly.includes(tag))).toEqual([]);
    // Of the old tags only their layout fences are left; their keys and queues went at the end (a
    // `stalled-check` the old count's workers, still running here, write again expires by itself).
    expect(result).toMatchObject({ left: [] });
    const oldNames = await Promise.all(
      cluster.nodes.map(async (node) => {
        const redis = new Redis(node.url);
        const names = await redis.keys('rpc:*');
        redis.disconnect();
        return names.filter((name) => oldOnly.some((tag) => name.includes(tag)));
      }),
    );
    expect(
      oldNames
        .flat()
        .filter((name) => !name.endsWith(':stalled-check'))
        .sort(),
    ).toEqual(oldOnly.map((tag) => `rpc:${tag}:layout`).sort());
    const timers = new RedisTimers({ connection: cluster.url, prefix: 'rpc', partitions: 6 });
    closing.push(() => timers.dispose());
    expect((await timers.snapshot()).sort()).toEqual(later.map((timer) => timer.id).sort());
    for (const timer of later.slice(0, 20)) {
      expect(await timers.get(timer.key)).toEqual(timer);
      expect(await timers.check(timer.id)).toBe(true);
    }
    // a new id never equals a moved one
    const fresh = await timers.scheduleMany(
      Array.from({ length: 60 }, (_, n) => ({ key: `new:${n}`, handler: 'record', delay: '1h' })),
    );
    const ids = new Set(later.map((timer) => timer.id));
    expect(fresh.filter((timer) => ids.has(timer.id))).toEqual([]);
  }, 120_000);
});
