import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import {
  type AppProcess,
  clusterEnv,
  ensureBuilt,
  killAll,
  type RedisServer,
  ROOT,
  spawnCluster,
  startRedis,
} from '@sundial/testing/harness';
import { documentedAcl } from '../documented-acl';
import { refusals, runEveryKindOfTimer } from './acl-fixture';

/**
 * The least-privilege ACL user of docs/operations.md, read from the document itself: a scheduler and a
 * worker run every kind of timer under it (one-shots both deliveries, intervals both awaitTask ways, a
 * cron) and every client operation, Redis refuses none of their commands (ACL LOG stays empty), and the
 * user can touch nothing outside the prefix.
 */
describe('cluster under the documented ACL user', () => {
  const PASSWORD = 'acl-test-secret';
  let redis: RedisServer;
  let sink: RedisServer;
  let admin: Redis;
  let apps: AppProcess[] = [];

  beforeAll(async () => {
    [redis, sink] = await Promise.all([startRedis(), startRedis(), ensureBuilt()]);
    admin = new Redis(redis.url);
    await admin.call('ACL', 'SETUSER', ...documentedAcl(PASSWORD));
    const url = `redis://sundial:${PASSWORD}@127.0.0.1:${redis.port}`;
    const cluster = await spawnCluster(clusterEnv(url, { SUNDIAL_TEST_RECORD_URL: sink.url }), 1, 1);
    apps = [...cluster.schedulers, ...cluster.workers];
  }, 180_000);

  afterAll(async () => {
    admin?.disconnect();
    await killAll(apps);
    await Promise.all([redis?.stop(), sink?.stop()]);
  });

  it('runs every kind of timer and every operation, and Redis refuses none of its commands', async () => {
    await runEveryKindOfTimer(apps, sink.url);
    expect(await refusals([['redis', admin]])).toEqual([]);
  }, 60_000);

  it('the user can reach nothing outside its prefix, nor administrative commands', async () => {
    const user = new Redis(`redis://sundial:${PASSWORD}@127.0.0.1:${redis.port}`, {
      maxRetriesPerRequest: 0,
    });
    try {
      await expect(user.set('other:key', '1')).rejects.toThrow(/NOPERM/);
      await expect(user.call('FLUSHALL')).rejects.toThrow(/NOPERM/);
      await expect(user.call('CONFIG', 'GET', 'requirepass')).rejects.toThrow(/NOPERM/);
      await expect(user.call('KEYS', '*')).rejects.toThrow(/NOPERM/);
      expect(await user.exists('sundial:anything')).toBe(0);
    } finally {
      user.disconnect();
    }
  });
});

/**
 * Every command Sundial's own Lua scripts and BullMQ's call is granted by the documented user: a script
 * path the cluster run above does not reach (a rare branch, a BullMQ script Sundial calls only in a
 * repartition or a metrics scrape) would otherwise fail only in production, and a BullMQ upgrade whose
 * scripts call one more command fails here.
 */
describe('the documented ACL user and the Lua scripts', () => {
  const granted = new Set(
    documentedAcl('x')
      .filter((word) => word.startsWith('+'))
      .map((word) => word.slice(1).split('|')[0]),
  );
  /** The commands the .lua files under `dir` call (`call` matches `redis.call(` and BullMQ's `rcall(`). */
  const calledIn = (dir: string, call: RegExp): Set<string> => {
    const called = new Set<string>();
    for (const file of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.lua')) continue;
      const text = readFileSync(join(dir, file), 'utf8');
      for (const match of text.matchAll(call)) called.add(match[1].toLowerCase());
    }
    return called;
  };

  it.each([
    ['Sundial', join(ROOT, 'libs', 'redis', 'src', 'store', 'commands'), /redis\.p?call\(\s*'([A-Za-z]+)'/g],
    [
      'BullMQ',
      join(ROOT, 'node_modules', 'bullmq', 'dist', 'cjs', 'commands'),
      /\b(?:rcall|redis\.p?call)\(\s*["']([A-Za-z]+)["']/g,
    ],
  ])('grants every command a script of %s calls', (_, dir, call) => {
    const called = calledIn(dir, call);
    expect(called.size).toBeGreaterThan(10);
    expect([...called].filter((command) => !granted.has(command)).sort()).toEqual([]);
  });
});
