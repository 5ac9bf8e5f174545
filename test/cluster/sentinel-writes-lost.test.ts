import { RedisTimers, reportWritesLost, SundialMetrics, watchPartitionCount } from '@sundial/redis';
import { type RedisSentinels, startRedisSentinels, waitFor } from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';

/** One Sentinel group, a client scheduling on it and a watch (as the apps run) telling what it finds. */
interface Group {
  redis: RedisSentinels;
  timers: RedisTimers;
  lines: { message: string; fields?: Record<string, unknown> }[];
  dataLost: number;
  registry: Registry;
  stopWatch?: () => Promise<void>;
}

async function startGroup(): Promise<Group> {
  const redis = await startRedisSentinels();
  const group: Group = {
    redis,
    timers: new RedisTimers({ connection: redis.url }),
    lines: [],
    dataLost: 0,
    registry: new Registry(),
  };
  return group;
}

/** Starts the watch (a look every 200 ms), resolved once it has read the primary's replication. */
async function watch(group: Group): Promise<void> {
  const logger = {
    error: (message: string, fields?: Record<string, unknown>) => group.lines.push({ message, fields }),
  };
  group.stopWatch = await watchPartitionCount({
    connection: group.redis.url,
    intervalMs: 200,
    told: new Set(),
    onDataLost: () => group.dataLost++,
    onWritesLost: reportWritesLost(logger, new SundialMetrics(group.registry)),
  });
}

/** Until the watch's connection to the Redis on `port` has looked (its replication, then its markers: `GET` last). */
async function watchLookedAt(port: number): Promise<void> {
  const redis = new Redis(port);
  try {
    await waitFor(async () => /name=sundial-watch .*cmd=get/.test((await redis.client('LIST')) as string), {
      timeoutMs: 10_000, // deadline: the watch looks at connect, then every 200 ms
      what: `the watch to look at the Redis on ${port}`,
    });
  } finally {
    redis.disconnect();
  }
}

/** Until the replica has synced (a diskless sync starts 5 s after it asked) and holds all of the primary's stream. */
async function inStep({ redis }: Group): Promise<void> {
  const [primary, replica] = [new Redis(redis.primary.port), new Redis(redis.replica.port)];
  const offset = (info: string) => /master_repl_offset:(\d+)/.exec(info)?.[1];
  try {
    await waitFor(
      async () => {
        const [ours, theirs] = await Promise.all([primary.info('replication'), replica.info('replication')]);
        return /master_link_status:up/.test(theirs) && offset(ours) === offset(theirs);
      },
      { timeoutMs: 20_000, what: 'the replica to be in step' }, // deadline: the sync waits 5 s to start
    );
  } finally {
    primary.disconnect();
    replica.disconnect();
  }
}

async function failover(group: Group): Promise<void> {
  const sentinel = new Redis(group.redis.sentinels[0].url);
  try {
    expect(await sentinel.call('SENTINEL', 'FAILOVER', group.redis.name)).toBe('OK');
  } finally {
    sentinel.disconnect();
  }
  await waitFor(async () => (await group.redis.primaryPort()) === group.redis.replica.port, {
    timeoutMs: 15_000, // deadline: the promotion takes about a second
    intervalMs: 50,
    what: 'the Sentinels to announce the replica as the primary',
  });
}

/** Cuts the replica's link, which stays down (its reconnects fail AUTH); the Sentinels still see it. */
async function cutReplica({ redis }: Group): Promise<void> {
  const replica = new Redis(redis.replica.port);
  try {
    await replica.config('SET', 'masterauth', 'not-the-password');
    await replica.call('CLIENT', 'KILL', 'TYPE', 'master');
    await waitFor(async () => /master_link_status:down/.test(await replica.info('replication')), {
      timeoutMs: 5_000, // deadline
      what: "the replica's link to be down",
    });
  } finally {
    replica.disconnect();
  }
}

/** Drops the watch's connection to the primary: it connects again and looks at once ('ready'). */
async function watchLooksAgain({ redis }: Group): Promise<void> {
  const primary = new Redis(redis.primary.port);
  // A look is an INFO, then a GET: `cmd=get` alone found no id in the middle of one (then CLIENT KILL ID
  // undefined, "ERR client-id should be greater than 0": a CI failure under load), so either, waited for.
  const watchIds = async () =>
    ((await primary.client('LIST')) as string)
      .split('\n')
      .filter((line) => / name=sundial-watch .*cmd=(get|info) /.test(line))
      .map((line) => /^id=(\d+)/.exec(line)?.[1]);
  try {
    const before = await waitFor(async () => (await watchIds())[0], { what: "the watch's connection" });
    await primary.call('CLIENT', 'KILL', 'ID', String(before));
    await waitFor(async () => (await watchIds()).some((id) => id !== before), {
      timeoutMs: 10_000, // deadline: the watch reconnects within a second or two
      what: 'the watch to look again',
    });
  } finally {
    primary.disconnect();
  }
}

/** A timer both have, the watch looking, then the replica cut off and five timers only the primary has. */
async function writeBehindTheReplica(group: Group): Promise<void> {
  await group.timers.schedule({ key: 'before', handler: 'record', every: '1h' });
  await inStep(group);
  await watch(group);
  await cutReplica(group);
  for (let n = 0; n < 5; n++)
    await group.timers.schedule({ key: `lost:${n}`, handler: 'record', every: '1h' });
}

const lostCount = async (group: Group) =>
  (await group.registry.getSingleMetric('sundial_redis_writes_lost_total')?.get())?.values[0]?.value;

/**
 * A failover to a replica that lagged drops writes the old primary acknowledged, every data marker kept
 * (docs/spec.md §4.1): the watch says it, once, and counts it; a failover that lost nothing says nothing.
 * Each case has a Sentinel group of its own, so they run side by side (`it.concurrent`): most of each is
 * waiting on the Sentinels (a sync, an election) and the watch's looks.
 */
describe('cluster: a Sentinel failover that lost acknowledged writes is said (SundialRedisWritesLost)', () => {
  let lagging: Group;
  let clean: Group;
  let dead: Group;

  beforeAll(async () => {
    [lagging, clean, dead] = await Promise.all([startGroup(), startGroup(), startGroup()]);
  }, 60_000);

  afterAll(async () => {
    for (const group of [lagging, clean, dead]) {
      await group?.stopWatch?.();
      await group?.timers.dispose();
      await group?.redis.stop();
    }
  });

  it.concurrent(
    'a replica cut off from the primary, promoted: one error line, the counter at 1, the timers gone',
    async () => {
      await writeBehindTheReplica(lagging);

      await failover(lagging);
      const [line] = await waitFor(() => (lagging.lines.length > 0 ? lagging.lines : undefined), {
        timeoutMs: 10_000, // deadline: the watch looks at the reconnect to the new primary
        what: 'the writes-lost line',
      });
      expect(line.message).toMatch(/^Redis lost writes acknowledged to Sundial under prefix 'sundial': /);
      expect(line.fields).toMatchObject({
        prefix: 'sundial',
        bytes: expect.any(Number),
        fix: expect.any(String),
      });
      expect(line.fields?.changes).toBeGreaterThanOrEqual(5);
      expect(await lostCount(lagging)).toBe(1);
      expect(lagging.dataLost).toBe(0); // the markers were kept: no data loss said
      expect(await lagging.timers.get('lost:0')).toBeNull(); // the loss is real
      expect(await lagging.timers.get('before')).not.toBeNull();
      await watchLookedAt(lagging.redis.replica.port); // a later look says it no more
      expect(lagging.lines).toHaveLength(1);
    },
    30_000,
  );

  it.concurrent(
    'a failover of a replica in step says nothing',
    async () => {
      await clean.timers.schedule({ key: 'kept', handler: 'record', every: '1h' });
      await inStep(clean);
      await watch(clean);
      await failover(clean);
      await watchLookedAt(clean.redis.replica.port);
      expect(clean.lines).toEqual([]);
      expect(await lostCount(clean)).toBe(0);
      expect(await clean.timers.get('kept')).not.toBeNull();
    },
    30_000,
  );

  it.concurrent(
    'the old primary dead with the writes: what the last look saw is told',
    async () => {
      await writeBehindTheReplica(dead);
      await watchLooksAgain(dead); // its look sees the writes on the old primary
      dead.redis.primary.signal('SIGSTOP'); // it answers no one: the Sentinels elect the replica
      try {
        await waitFor(async () => (await dead.redis.primaryPort()) === dead.redis.replica.port, {
          timeoutMs: 15_000, // deadline: down after 1 s, then the election
          intervalMs: 100,
          what: 'the Sentinels to promote the replica',
        });
        const [line] = await waitFor(() => (dead.lines.length > 0 ? dead.lines : undefined), {
          timeoutMs: 10_000, // deadline: the watch looks at the reconnect; the old primary is given 1 s
          what: 'the writes-lost line',
        });
        expect(line.message).toMatch(/^Redis lost writes acknowledged to Sundial under prefix 'sundial': /);
        expect(line.fields?.changes).toBeGreaterThanOrEqual(5);
        expect(await lostCount(dead)).toBe(1);
        expect(await dead.timers.get('lost:0')).toBeNull();
      } finally {
        dead.redis.primary.signal('SIGCONT');
      }
    },
    30_000,
  );
});
