import { DEFAULT_COMMAND_TIMEOUT_MS, MAX_PARTITIONS, RedisTimers } from '@sundial/redis';
import {
  DIST,
  ensureBuilt,
  freePort,
  type RedisSentinels,
  type RedisServer,
  startRedis,
  startRedisSentinels,
} from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { documentedAcl, documentedRepartitionGrant } from '../documented-acl';
import {
  DEFAULT_COMMAND_TIMEOUT_MS as CLI_COMMAND_TIMEOUT_MS,
  MAX_PARTITIONS as CLI_MAX_PARTITIONS,
} from '../../apps/cli/src/commands/repartition';
import { BIN, runCli, runCliWaiting } from './run-cli';

const PREFIX = 'ops';
const TIMERS = 300;

/**
 * `sundial repartition --to P` against a private Redis (no scheduler: it talks to Redis itself), with
 * REDIS_URL and SUNDIAL_PREFIX or --redis-url and --prefix (docs/operations.md "Changing the partition
 * count"): it moves every timer, and refuses a count it cannot move to with the exit codes of the CLI.
 * The cases run side by side (`it.concurrent`): each works on a prefix of its own (the ACL case's user
 * is its own too; the Sentinel case has its own Redis), and the unreachable Redis ones wait out their
 * SUNDIAL_COMMAND_TIMEOUT_MS, on timers, while the others run.
 */
describe('sundial repartition', () => {
  let redis: RedisServer;
  let sentinels: RedisSentinels;

  beforeAll(async () => {
    [redis, sentinels] = await Promise.all([
      startRedis(),
      startRedisSentinels({ sentinelPassword: 'watch' }),
      ensureBuilt(),
    ]);
  }, 180_000);
  afterAll(() => Promise.all([redis?.stop(), sentinels?.stop()]));

  const sundial = (args: string[], env: Record<string, string> = {}) => runCli(args, env);

  const keys = Array.from({ length: TIMERS }, (_, n) => `k:${n}`);

  it.concurrent(
    'moves every timer from 1 to 4 partitions, then refuses the same count and bad ones',
    async () => {
      const before = new RedisTimers({ connection: redis.url, prefix: PREFIX, partitions: 1 });
      await before.scheduleMany(keys.map((key) => ({ key, handler: 'h', delay: '1h' })));
      await before.dispose();

      const done = await sundial(['repartition', '--to', '4'], {
        REDIS_URL: redis.url,
        SUNDIAL_PREFIX: PREFIX,
      });
      expect(done.code).toBe(0);
      // which Redis and prefix it works on, first (it named neither)
      expect(done.stderr.split('\n')[0]).toBe(`repartition: prefix ${PREFIX} on Redis ${redis.url}`);
      expect(done.stderr).toMatch(/^repartition 1 → 4: fenced, 0 moved/m);
      expect(done.stderr).toMatch(/^repartition 1 → 4: done, \d+ moved, 0 waiting/m);
      const [header, row] = done.stdout.split('\n');
      expect(header.split(/\s+/)).toEqual(['PREFIX', 'FROM', 'TO', 'MOVED', 'REMOVED', 'MS']);
      // 1 → 4 removes no partition
      const [prefix, from, to, moved, removed] = row.split(/\s+/);
      expect(removed).toBe('0');
      expect([prefix, from, to]).toEqual([PREFIX, '1', '4']);
      // a key whose partition stays 0 does not move (one node: the same base); about 3 in 4 move
      expect(Number(moved)).toBeGreaterThan(TIMERS / 2);
      expect(done.stdout).toContain('Restart every process with SUNDIAL_PARTITIONS=4.');

      const after = new RedisTimers({ connection: redis.url, prefix: PREFIX, partitions: 4 });
      const found = await Promise.all(keys.map((key) => after.get(key)));
      expect(found.map((timer) => timer?.key)).toEqual(keys);
      await after.dispose();

      // the flags instead of the environment; --json: the refusal as {"error": {...}} on stderr
      const same = await sundial([
        'repartition',
        '--to',
        '4',
        '--redis-url',
        redis.url,
        '--prefix',
        PREFIX,
        '--json',
      ]);
      expect(same.code).toBe(1);
      expect(same.stdout).toBe('');
      expect(JSON.parse(same.stderr)).toEqual({
        error: {
          reason: 'invalid',
          field: 'to',
          message: expect.stringContaining('already'),
          fix: expect.any(String),
        },
      });

      const zero = await sundial(['repartition', '--to', '0'], {
        REDIS_URL: redis.url,
        SUNDIAL_PREFIX: PREFIX,
      });
      expect(zero.code).toBe(1);
      expect(zero.stderr).toMatch(/^sundial: invalid \(field to\): .*from 1 to 1024, got 0\.\nfix: /m);
      // a negative count is one out of range as 0 is, not "not a whole number"
      const negative = await sundial(['repartition', '--to', '-3'], {
        REDIS_URL: redis.url,
        SUNDIAL_PREFIX: PREFIX,
      });
      expect(negative.code).toBe(1);
      expect(negative.stderr).toMatch(/^sundial: invalid \(field to\): .*from 1 to 1024, got -3\.\nfix: /m);
    },
    60_000,
  );

  it.concurrent(
    'prints the summary as JSON with --json; usage errors exit 2',
    async () => {
      const run = await sundial([
        'repartition',
        '--to',
        '2',
        '--json',
        '--redis-url',
        redis.url,
        '--prefix',
        'json',
      ]);
      expect(run.code).toBe(0);
      // nothing ever written under the prefix: the count is just recorded
      expect(JSON.parse(run.stdout)).toEqual({
        prefix: 'json',
        from: 2,
        to: 2,
        moved: 0,
        removed: 0,
        left: [],
        ms: expect.any(Number),
      });

      for (const args of [[], ['--to', 'four'], ['--to', '2', 'extra'], ['--to', '2', '--partitions', '3']]) {
        const refused = await sundial(['repartition', ...args], { REDIS_URL: redis.url });
        expect(refused).toMatchObject({ code: 2, stdout: '' });
        expect(refused.stderr).toMatch(/^sundial: usage: /);
      }
      const four = await sundial(['repartition', '--to', '4.5'], { REDIS_URL: redis.url });
      expect(four.stderr).toBe(
        'sundial: usage: --to 4.5 is not a whole number from 1 to 1024\nfix: Write the new partition count, a whole number from 1 to 1024, e.g. --to 8.\n',
      );
    },
    30_000,
  );

  it.concurrent(
    'under the documented ACL user: refused before it changes anything, then moves with the documented +scan',
    async () => {
      // The user's keys are `sundial:*` (docs/operations.md "A least-privilege ACL user").
      const admin = new Redis(redis.url);
      try {
        await admin.call('ACL', 'SETUSER', ...documentedAcl('acl-secret'));
        const seeded = new RedisTimers({ connection: redis.url, prefix: 'sundial', partitions: 1 });
        await seeded.scheduleMany(keys.slice(0, 20).map((key) => ({ key, handler: 'h', delay: '1h' })));
        await seeded.dispose();
        const env = {
          REDIS_URL: `redis://sundial:acl-secret@127.0.0.1:${redis.port}`,
          SUNDIAL_PREFIX: 'sundial',
        };

        // A wrong password was "internal: WRONGPASS …", "a bug in the sundial CLI", exit 3.
        const wrong = await sundial(['repartition', '--to', '2'], {
          ...env,
          REDIS_URL: env.REDIS_URL.replace('acl-secret', 'not-it'),
        });
        expect(wrong).toMatchObject({ code: 1, stdout: '' });
        expect(wrong.stderr.split('\n').slice(1)).toEqual([
          "sundial: invalid (field connection): Redis refused this connection's credentials (WRONGPASS invalid username-password pair or user is disabled.). Nothing was changed.",
          "fix: Give the user and password of the apps' REDIS_URL (redis://user:password@host:port; --redis-url of sundial repartition), then run it again.",
          '',
        ]);

        const refused = await sundial(['repartition', '--to', '2'], env);
        expect(refused).toMatchObject({ code: 1, stdout: '' });
        expect(refused.stderr).toMatch(
          // the Redis it tried, its password left out
          /^repartition: prefix sundial on Redis redis:\/\/\*\*\*@127\.0\.0\.1:\d+\nsundial: invalid \(field connection\): Redis refused SCAN to this user \(NOPERM .*\nfix: .*\+scan/,
        );
        expect(refused.stderr).not.toContain('acl-secret');
        // no fence: the apps with the old count go on writing
        expect(await admin.get('sundial:repartition')).toBeNull();
        expect(await admin.get('sundial:partitions')).toBe('1');

        await admin.call('ACL', ...documentedRepartitionGrant());
        const done = await sundial(['repartition', '--to', '2'], env);
        expect(done.code).toBe(0);
        expect(await admin.get('sundial:partitions')).toBe('2');
      } finally {
        admin.disconnect();
      }
    },
    60_000,
  );

  // Each wait for a Redis reply is bounded by SUNDIAL_COMMAND_TIMEOUT_MS (5 s by default, as the apps): nothing listening used to take
  // ioredis's 20 reconnect attempts (~10.5 s), and a Redis that takes the connection and never answers
  // held the CLI for ever.
  it.concurrent(
    "exits 3 within SUNDIAL_COMMAND_TIMEOUT_MS when Redis cannot be reached, naming the connection's error",
    async () => {
      const port = await freePort();
      const url = `redis://127.0.0.1:${port}`;
      const args = ['repartition', '--to', '2', '--redis-url', url];
      const [closed, bounded, unusable] = await Promise.all([
        runCliWaiting(args, {}),
        runCliWaiting(args, { SUNDIAL_COMMAND_TIMEOUT_MS: '1000' }),
        sundial([...args, '--json'], { SUNDIAL_COMMAND_TIMEOUT_MS: '5s' }),
      ]);
      expect(unusable.code).toBe(2);
      expect(JSON.parse(unusable.stderr)).toEqual({
        error: {
          reason: 'invalid',
          field: 'SUNDIAL_COMMAND_TIMEOUT_MS',
          message:
            'SUNDIAL_COMMAND_TIMEOUT_MS "5s" is not a whole number of milliseconds from 1 to 2147483647',
          fix: "Set SUNDIAL_COMMAND_TIMEOUT_MS to e.g. 5000 (at most 2147483647, Node's longest timer), or unset it for 5 s.",
        },
      });
      expect(closed.code).toBe(3);
      expect(closed.stderr.split('\n')).toEqual([
        `repartition: prefix sundial on Redis ${url}`,
        `sundial: unavailable: Redis is unreachable (connect ECONNREFUSED 127.0.0.1:${port}); the call changed nothing.`,
        'fix: Check that Redis is up and the connection settings (URL, credentials, TLS) are right, then retry: ' +
          'nothing of the call was applied, so a retry is safe. The same command resumes a repartition cut off; each Redis reply is waited for SUNDIAL_COMMAND_TIMEOUT_MS (5000 ms).',
        '',
      ]);
      expect(bounded.code).toBe(3);
      expect(bounded.stderr).toContain(`Redis is unreachable (connect ECONNREFUSED 127.0.0.1:${port})`);
      // From the CLI's first line to its exit, with room for a loaded host (repartition's setup after
      // that line took 3 s at a load of 10 on 2 cores); the default's 5 s has no such room below 10.5 s.
      expect(bounded.waitedMs).toBeLessThan(6_000); // deadline: the 1 s bound, not ioredis's ~10.5 s of retries
    },
    60_000,
  );

  it.concurrent(
    'exits 3 within SUNDIAL_COMMAND_TIMEOUT_MS when Redis takes the connection and never answers',
    async () => {
      const silent: Server = createServer(() => undefined);
      await new Promise<void>((listening) => silent.listen(0, '127.0.0.1', listening));
      try {
        const port = (silent.address() as { port: number }).port;
        const args = ['repartition', '--to', '2', '--redis-url', `redis://127.0.0.1:${port}`];
        const run = await runCliWaiting(args, { SUNDIAL_COMMAND_TIMEOUT_MS: '1000' });
        expect(run.waitedMs).toBeLessThan(6_000); // deadline: the 1 s bound (it used to wait for ever)
        expect(run.code).toBe(3);
        expect(run.stderr.split('\n').slice(1)).toEqual([
          'sundial: unavailable: Redis is unreachable (no answer within 1000 ms, commandTimeoutMs); the call changed nothing.',
          expect.stringContaining('each Redis reply is waited for SUNDIAL_COMMAND_TIMEOUT_MS (1000 ms).'),
          '',
        ]);
      } finally {
        silent.close();
      }
    },
    60_000,
  );

  // A bad --to or SUNDIAL_COMMAND_TIMEOUT_MS loaded @sundial/redis (ioredis, BullMQ: ~500 files) to
  // read its bounds before refusing; now the command line is refused first, with the library's bounds.
  it.concurrent.each([
    [['--to', 'four'], {}, '--to four is not a whole number from 1 to 1024'],
    [['--to', '4'], { SUNDIAL_COMMAND_TIMEOUT_MS: '5s' }, 'SUNDIAL_COMMAND_TIMEOUT_MS "5s" is not a whole'],
  ])(
    'repartition %j %j: a bad command line (exit 2) before the Redis library loads',
    async (args, env, said) => {
      expect([CLI_MAX_PARTITIONS, CLI_COMMAND_TIMEOUT_MS]).toEqual([
        MAX_PARTITIONS,
        DEFAULT_COMMAND_TIMEOUT_MS,
      ]);
      const hook = join(DIST, 'libs', 'testing', 'src', 'loaded-modules-hook.js');
      const run = await new Promise<{ code: number; stderr: string }>((resolve) =>
        execFile(
          process.execPath,
          ['--require', hook, BIN, 'repartition', ...args],
          { env: { ...process.env, REDIS_URL: redis.url, ...env } },
          (error, _stdout, stderr) =>
            resolve({ code: typeof error?.code === 'number' ? error.code : 0, stderr }),
        ),
      );
      expect(run.code).toBe(2);
      expect(run.stderr).toContain(said);
      const line = run.stderr.split('\n').find((text) => text.startsWith('loaded-modules '));
      const { files } = JSON.parse(line!.slice('loaded-modules '.length)) as { files: string[] };
      expect(
        files.filter((file) => /node_modules\/(ioredis|bullmq)\/|dist\/libs\/redis\//.test(file)),
      ).toEqual([]);
    },
  );

  // Through Sentinel: a master name the Sentinels do not know is refused at once, naming the fix. The
  // repartition's commands used to wait for a primary for ever (nothing printed; the CLI never returned).
  it.concurrent(
    'through Sentinel: moves the timers; a master name the Sentinels do not know exits 1 at once, saying what to write',
    async () => {
      const timers = new RedisTimers({ connection: sentinels.url, prefix: 'viasentinel' });
      await timers.schedule({ key: 'k', handler: 'log', delay: 600_000 });
      await timers.dispose();
      const env = { SUNDIAL_PREFIX: 'viasentinel' };
      const moved = await runCli(['repartition', '--to', '2', '--redis-url', sentinels.url], env);
      expect({ code: moved.code, stderr: moved.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
      expect(moved.stdout).toMatch(/viasentinel\s+1\s+2\s+\d+\s/);
      // the Sentinels' password is not printed with the URL
      expect(moved.stderr).toContain('sentinelPassword=***');
      expect(moved.stderr).not.toContain('=watch');

      const at = Date.now();
      const wrongName = sentinels.url.replace(`/${sentinels.name}?`, '/nosuch?');
      const refused = await runCli(['repartition', '--to', '3', '--redis-url', wrongName], env);
      expect(Date.now() - at).toBeLessThan(10_000); // far below a wait for Redis
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        'sundial: invalid (field connection): The Sentinels know no primary by the master name in the Redis URL',
      );
      expect(refused.stderr).toContain('SENTINEL MASTERS');
    },
    60_000,
  );
});
