import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Timer } from '@sundial/core';
import { Redis } from 'ioredis';
import {
  type AppProcess,
  clusterEnv,
  ensureBuilt,
  keyPath,
  killAll,
  readRuns,
  type RedisServer,
  ROOT,
  spawnCluster,
  startRedis,
  waitFor,
} from '@sundial/testing/harness';
import { documentedAcl } from '../documented-acl';

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
    const api = apps[0].api;
    const post = async (spec: object): Promise<Timer> => {
      const reply = await api<Timer>('POST', '/v1/timers', { removeOnComplete: false, ...spec });
      expect(reply.status).toBe(201);
      return reply.body;
    };
    const timers = [
      await post({ key: 'acl:once', handler: 'record', delay: 200 }),
      await post({
        key: 'acl:once-amo',
        handler: 'slow',
        payload: { ms: 100 },
        delay: 200,
        delivery: 'at-most-once',
      }),
      await post({ key: 'acl:every', handler: 'slow', payload: { ms: 50 }, every: 300, maxRuns: 2 }),
      await post({ key: 'acl:free', handler: 'record', every: 300, maxRuns: 3, awaitTask: false }),
      await post({ key: 'acl:cron', handler: 'record', cron: '* * * * * *', tz: 'UTC', maxRuns: 2 }),
    ];
    // the other scripts: reschedule, pause, resume, trigger, cancel, cancel-all, and the reads
    await post({ key: 'acl:ops', handler: 'record', every: 60_000 });
    expect((await api('POST', `${keyPath('acl:ops')}/reschedule`, { delay: 60_000 })).status).toBe(200);
    expect((await api('POST', `${keyPath('acl:ops')}/pause`)).status).toBe(200);
    expect((await api('POST', `${keyPath('acl:ops')}/resume`)).status).toBe(200);
    expect((await api('POST', `${keyPath('acl:ops')}/trigger`)).status).toBe(200);
    await post({ key: 'acl:gone', handler: 'record', delay: 60_000 });
    expect((await api<{ cancelled: boolean }>('DELETE', keyPath('acl:gone'))).body).toEqual({
      cancelled: true,
    });
    expect((await api('GET', '/v1/timers?prefix=acl:')).status).toBe(200);

    const records = new Redis(sink.url);
    try {
      await waitFor(
        async () => {
          const rows = await Promise.all(
            timers.map(async (t) => (await api<Timer>('GET', keyPath(t.key))).body),
          );
          return rows.every((row) => row.status === 'completed');
        },
        { timeoutMs: 20_000, intervalMs: 100, what: 'every timer to complete' },
      );
      const runs = await readRuns(records);
      const started = (key: string) =>
        runs.filter((run) => run.key === key && run.event === 'started').length;
      expect(timers.map((t) => [t.key, started(t.key)])).toEqual([
        ['acl:once', 1],
        ['acl:once-amo', 1],
        ['acl:every', 2],
        ['acl:free', 3],
        ['acl:cron', 2],
      ]);
      // the triggered run of acl:ops
      await waitFor(async () => (await readRuns(records)).some((run) => run.key === 'acl:ops'), {
        what: 'the triggered run',
      });
    } finally {
      records.disconnect();
    }
    await post({ key: 'acl:idle', handler: 'record', delay: 3_600_000 });
    expect((await api('DELETE', '/v1/timers?prefix=acl:')).status).toBe(200);
    // a cancel-all's entry of a key with no ledger list: read from its tombstone and the call's record
    const history = await api<{ entries: { event: string }[] }>('GET', `${keyPath('acl:idle')}/history`);
    expect(history.body.entries.map((entry) => entry.event)).toEqual(['cancelled', 'scheduled']);
    // the apps stay ready: no refused command broke a loop
    for (const app of apps) expect((await app.api('GET', '/health/ready')).status).toBe(200);
    // The one refusal: the scheduler's maxmemory-policy check at start, skipped without CONFIG (as documented).
    const refused = ((await admin.call('ACL', 'LOG')) as unknown[][]).map((entry) => ({
      context: entry[entry.indexOf('context') + 1],
      object: entry[entry.indexOf('object') + 1],
    }));
    expect(refused.filter((entry) => entry.object !== 'config|get')).toEqual([]);
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
 * Every command Sundial's own Lua scripts call is granted by the documented user: a script path the
 * cluster run above does not reach (a rare branch) would otherwise fail only in production.
 */
describe('the documented ACL user and the Lua scripts', () => {
  it('grants every command a script calls', () => {
    const granted = new Set(
      documentedAcl('x')
        .filter((word) => word.startsWith('+'))
        .map((word) => word.slice(1).split('|')[0]),
    );
    const commands = join(ROOT, 'libs', 'redis', 'src', 'store', 'commands');
    const called = new Set<string>();
    for (const file of readdirSync(commands, { recursive: true, encoding: 'utf8' })) {
      if (!file.endsWith('.lua')) continue;
      const text = readFileSync(join(commands, file), 'utf8');
      for (const match of text.matchAll(/redis\.p?call\(\s*'([A-Za-z]+)'/g))
        called.add(match[1].toLowerCase());
    }
    expect(called.size).toBeGreaterThan(10);
    expect([...called].filter((command) => !granted.has(command)).sort()).toEqual([]);
  });
});
