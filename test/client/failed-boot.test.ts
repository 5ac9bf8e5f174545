import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DistributedCron, SundialModule, Timers } from '@sundial/client';
import {
  childOutput,
  DIST,
  ensureBuilt,
  type RedisCluster,
  type RedisSentinels,
  type RedisServer,
  spawnOwned,
  startRedis,
  startRedisCluster,
  startRedisSentinels,
  waitFor,
  within,
} from '@sundial/testing/harness';
import { Redis } from 'ioredis';

/** How long a failed boot may take to end its process: Nest's boot, and nothing left holding it. */
const EXIT_DEADLINE_MS = 20_000;

/** The build running before a deploy: the fixture's `listen` app declares the report at 06:00. */
@Injectable()
class RunningBuild {
  @DistributedCron('failed-boot.report', '0 9 * * *')
  report(): void {}
}

/**
 * A user's Nest app whose boot fails after Sundial's modules were made (test/fixtures/failed-boot):
 * Nest calls no shutdown hook then, so whatever Sundial opened before the failure must not hold the
 * process (docs/spec.md §5.1).
 */
describe('a Nest app whose boot fails', () => {
  let redis: RedisServer;
  let probe: Redis;
  let n = 0;

  beforeAll(async () => {
    await ensureBuilt();
    redis = await startRedis();
    probe = new Redis(redis.url);
  }, 300_000);
  afterAll(async () => {
    probe?.disconnect();
    await redis?.stop();
  });

  /** Runs the fixture until it exits by itself (else it is killed and the test fails, with its lines). */
  const bootFailing = async (env: Record<string, string>) => {
    const child = spawnOwned(process.execPath, [join(DIST, 'test/fixtures/failed-boot/src/main.js')], {
      env: { ...process.env, REDIS_URL: redis.url, FIXTURE_PREFIX: `fb${n++}`, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const { lines, ended } = childOutput(child);
    try {
      const end = await within(ended, EXIT_DEADLINE_MS, "the failed boot's process to exit by itself"); // deadline
      return { end, lines };
    } catch (error) {
      child.kill('SIGKILL');
      throw new Error(`${String(error)}:\n${lines.join('\n')}`, { cause: error });
    }
  };

  it("exits by itself when a provider of its own throws in onModuleInit: SundialModule's connection was not open", async () => {
    const { end, lines } = await bootFailing({ FIXTURE_FAIL: 'init' });
    expect(end).toEqual({ code: 1, signal: null });
    expect(lines).toContainEqual(
      expect.stringContaining("boot failed: Error: the app's own provider failed at init"),
    );
  }, 60_000);

  it("exits by itself when a provider of its own throws in onModuleInit beside SundialWorkerModule: its runner's, loops' and BullMQ's connections were not open", async () => {
    const { end, lines } = await bootFailing({ FIXTURE_FAIL: 'init', FIXTURE_WORKER: '1' });
    expect(end).toEqual({ code: 1, signal: null });
    expect(lines).toContainEqual(
      expect.stringContaining("boot failed: Error: the app's own provider failed at init"),
    );
  }, 60_000);

  it("exits by itself when a provider of its own throws in onModuleInit beside SundialWorkerModule on the app's BullModule.forRoot connection (configKey)", async () => {
    const { end, lines } = await bootFailing({
      FIXTURE_FAIL: 'init',
      FIXTURE_WORKER: '1',
      FIXTURE_CONFIG_KEY: '1',
    });
    expect(end).toEqual({ code: 1, signal: null });
    expect(lines).toContainEqual(
      expect.stringContaining("boot failed: Error: the app's own provider failed at init"),
    );
  }, 60_000);

  describe('on a Redis Cluster and through Sentinel', () => {
    let cluster: RedisCluster;
    let sentinels: RedisSentinels;
    beforeAll(async () => {
      [cluster, sentinels] = await Promise.all([startRedisCluster(3), startRedisSentinels()]);
    }, 120_000);
    afterAll(async () => {
      await Promise.all([cluster?.stop(), sentinels?.stop()]);
    });

    const cases: [string, Record<string, string>][] = [
      ['SundialModule alone', {}],
      ['beside SundialWorkerModule', { FIXTURE_WORKER: '1' }],
      [
        "beside SundialWorkerModule on the app's BullModule.forRoot connection (configKey)",
        { FIXTURE_WORKER: '1', FIXTURE_CONFIG_KEY: '1' },
      ],
    ];
    it.each(
      cases.flatMap(([name, env]) => [
        ['a Redis Cluster', name, env] as const,
        ['Sentinel', name, env] as const,
      ]),
    )(
      'on %s, exits by itself when a provider of its own throws in onModuleInit: %s',
      async (topology, _, env) => {
        const onCluster = topology === 'a Redis Cluster';
        const { end, lines } = await bootFailing({
          REDIS_URL: onCluster ? cluster.url : sentinels.url,
          ...(onCluster && { FIXTURE_TAGGING: 'spread' }),
          FIXTURE_FAIL: 'init',
          ...env,
        });
        expect(end).toEqual({ code: 1, signal: null });
        expect(lines).toContainEqual(
          expect.stringContaining("boot failed: Error: the app's own provider failed at init"),
        );
      },
      60_000,
    );
  });

  it('exits by itself when SundialWorkerModule finds no SundialModule (isGlobal: false in a feature module)', async () => {
    const { end, lines } = await bootFailing({ FIXTURE_FAIL: 'worker-without-sundial' });
    expect(end).toEqual({ code: 1, signal: null });
    expect(lines).toContainEqual(expect.stringContaining('boot failed'));
    expect(lines.join('\n')).toContain('imports');
  }, 60_000);

  /**
   * A replica of the running build (its set announced), then the fixture's newer build booting with
   * `env` and failing after its boot's pass: its set must not stay live, and the running replica's next
   * look (every 500 ms) finds its own set the newest and writes its row again.
   */
  const failingNewerBuild = async (env: Record<string, string>, expected: string) => {
    const prefix = `fb${n++}`;
    const running = await Test.createTestingModule({
      imports: [
        SundialModule.forRoot({ connection: redis.url, prefix, appName: 'failed-boot', cronRefreshMs: 500 }),
      ],
      providers: [RunningBuild],
    }).compile();
    const taken = createServer();
    try {
      await running.init();
      const sets = `${prefix}:cron-sets:failed-boot`;
      const [runningSet] = Object.keys(await probe.hgetall(sets)).filter((field) => field.startsWith('s:'));
      await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
      const { port } = taken.address() as AddressInfo;
      // Its announcements would last 30 s: past the check below, whatever the host's pace.
      const given = { FIXTURE_PREFIX: prefix, PORT: String(port), FIXTURE_CRON_REFRESH_MS: '10000', ...env };
      const { end, lines } = await bootFailing(given);
      expect(end).toEqual({ code: 1, signal: null });
      expect(lines.join('\n')).toContain(expected);
      expect(lines.join('\n')).toContain('declaration set is withdrawn');
      const [seconds, micros] = await probe.time();
      const now = Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
      const live = Object.entries(await probe.hgetall(sets))
        .filter(([field, value]) => field.startsWith('s:') && Number(value.split(':')[1]) >= now)
        .map(([field]) => field);
      expect(live).toEqual([runningSet]);
      const timers = running.get(Timers);
      await waitFor(async () => (await timers.get('cron:failed-boot.report'))?.cron === '0 9 * * *', {
        timeoutMs: 10_000, // deadline
        what: "the running replica's row written again",
      });
    } finally {
      taken.close();
      await running.close();
    }
  };

  it('withdraws the declaration set its boot announced when app.listen fails (port in use): the running replicas do not defer to it', async () => {
    // Nest's starter main.ts: the rejection ends it
    await failingNewerBuild({ FIXTURE_FAIL: 'listen' }, 'EADDRINUSE');
  }, 60_000);

  it("withdraws it when a provider's onApplicationBootstrap after SundialModule's throws and the process exits on the rejection", async () => {
    const free = { PORT: '0' }; // the boot fails before it listens
    await failingNewerBuild(
      { FIXTURE_FAIL: 'bootstrap', ...free },
      "the app's own provider failed at bootstrap",
    );
  }, 60_000);

  it("withdraws it when a provider's onApplicationBootstrap throws and main.ts closes the app", async () => {
    const env = { FIXTURE_FAIL: 'bootstrap', FIXTURE_ON_FAILURE: 'close', PORT: '0' };
    await failingNewerBuild(env, 'the app closes before its HTTP server listened');
  }, 60_000);
});
