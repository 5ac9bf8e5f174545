import { RedisTimers } from '@sundial/redis';
import { Redis } from 'ioredis';
import type { AppProcess, RedisServer } from '@sundial/testing/harness';
import { ensureBuilt, killAll, spawnApp, startRedis, waitFor } from '@sundial/testing/harness';

const LOST = "Redis lost Sundial's data";
/** A reconnect and the 5 s look of each replica, with room on a busy host. */
const NOTICE_MS = 20_000;

const lossLines = (replica: AppProcess): string[] => replica.lines.filter((line) => line.includes(LOST));

/** The ids of the watch connections (named sundial-watch) whose last command was the marker's GET. */
async function watchesLooked(raw: Redis): Promise<string[]> {
  const list = (await raw.client('LIST')) as string;
  return [...list.matchAll(/id=(\d+) .*name=sundial-watch .*cmd=get/g)].map((match) => match[1]);
}

/**
 * examples/reminders as deployed — replicas embedding SundialWorkerModule with `dispatch: true`, no
 * apps/scheduler or apps/worker — on a Redis without persistence (docs/spec.md §4.1,
 * docs/operations.md "SundialRedisDataLost"): a restart that lost the data is said once by each
 * replica, and the daily digest's @DistributedCron row and the heartbeat's @DistributedInterval row come
 * back without a redeploy.
 */
describe('examples/reminders: Redis restarted without persistence', () => {
  let redis: RedisServer;
  let raw: Redis;
  let timers: RedisTimers;
  let replicas: AppProcess[] = [];

  beforeAll(async () => {
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
    raw = new Redis(redis.url);
    timers = new RedisTimers({ connection: redis.url, prefix: 'reminders' });
    const env = { REDIS_URL: redis.url, HEARTBEAT_EVERY: '1h' }; // DIGEST_CRON: its default, daily at 08:00
    replicas = await Promise.all(
      [0, 1].map((n) => spawnApp('examples/reminders', `r${n}`, { ...env, REPLICA_NAME: `r${n}` })),
    );
  }, 180_000);

  afterAll(async () => {
    raw?.disconnect();
    await Promise.all([killAll(replicas), timers?.dispose()]);
    await redis?.stop();
  });

  it('a reconnect is no loss; a restart that lost the data: one error line per replica, the digest row back', async () => {
    const digest = await waitFor(() => timers.get('cron:reminders.digest'), { what: 'the digest row' });
    expect(digest).toMatchObject({ cron: '0 8 * * *' });

    // A plain reconnect (the connections cut, Redis kept its data) finds the marker each replica saw.
    const before = await waitFor(
      async () => ((await watchesLooked(raw)).length === 2 ? watchesLooked(raw) : undefined),
      {
        what: "both replicas' watches to read the marker",
      },
    );
    for (const id of before) await raw.client('KILL', 'ID', id);
    await waitFor(
      async () => (await watchesLooked(raw)).filter((id) => !before.includes(id)).length === 2 || undefined,
      { what: 'both watches to reconnect and read the marker again' },
    );

    await redis.restart(100);

    for (const replica of replicas) {
      await waitFor(() => lossLines(replica).length > 0 || undefined, {
        timeoutMs: NOTICE_MS,
        what: `${replica.name} to notice the loss`,
      });
    }
    const row = await waitFor(async () => (await timers.get('cron:reminders.digest')) ?? undefined, {
      timeoutMs: NOTICE_MS,
      what: 'the digest row registered again',
    });
    expect(row).toMatchObject({ cron: '0 8 * * *', status: 'pending' });
    // the heartbeat's @DistributedInterval row too (a boot-time schedule({ ifExists: 'keep' }) stayed gone)
    const beat = await waitFor(async () => (await timers.get('interval:reminders.heartbeat')) ?? undefined, {
      timeoutMs: NOTICE_MS,
      what: 'the heartbeat row registered again',
    });
    expect(beat).toMatchObject({ everyMs: 3_600_000, status: 'pending' });
    // one line per replica: the reconnect said nothing, the loss was said once
    expect(replicas.map((replica) => lossLines(replica).length)).toEqual([1, 1]);
    expect(lossLines(replicas[0])[0]).toContain('appendonly yes');
  }, 90_000);
});
