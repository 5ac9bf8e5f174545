import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { closeRedis, openRedis } from '@sundial/redis';
import {
  type AppProcess,
  clusterEnv,
  DIST,
  ensureBuilt,
  killAll,
  makeTestCerts,
  readRuns,
  type RedisSentinels,
  type RedisServer,
  spawnApp,
  startRedis,
  startRedisSentinels,
  waitFor,
} from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { libraryHost, recordingLogger } from '../redis/library-host-fixture';

/** Far below the 30 s a start waits for Redis; a refusal must come well within it. */
const AT_ONCE_MS = 5_000;
const PASSWORD = 's+cret&';

/** the Sentinels of the first describe (a password of their own), and the TLS ones of the second */
let redis: RedisSentinels;
let tlsRedis: RedisSentinels;
/** where the TLS case's apps record their runs */
let records: RedisServer;

// Both sets of Sentinels start at once, for both describes: most of a start is Sentinels finding the
// replica and each other (their hellos go out every 2 s), idle time that one after the other doubled.
beforeAll(async () => {
  await Promise.all([
    startRedisSentinels({ sentinelPassword: PASSWORD }).then((started) => (redis = started)),
    startRedisSentinels({ tls: makeTestCerts() }).then((started) => (tlsRedis = started)),
    startRedis().then((started) => (records = started)),
    ensureBuilt(),
  ]);
}, 60_000);
afterAll(() => Promise.all([redis?.stop(), tlsRedis?.stop(), records?.stop()]));

/**
 * REDIS_URL through Sentinels that have a password of their own (docs/operations.md "Redis settings"):
 * the Sentinels' credentials go in the URL's query, Redis's before the hosts. What the Sentinels refuse —
 * their AUTH, a master name they do not know — fails a start at once, saying which and what to write,
 * where it waited out its 30 s before and then blamed Redis for not answering.
 */
describe('Sentinel URLs: credentials of their own, refusals at once', () => {
  const closers: (() => Promise<void>)[] = [];
  const hosts = () => redis.sentinels.map((sentinel) => `127.0.0.1:${sentinel.port}`).join(',');

  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  it('takes the Sentinels’ password from the query, with one Sentinel down at start', async () => {
    expect(redis.url).toContain(`?sentinelPassword=${encodeURIComponent(PASSWORD)}`);
    const nothing = openRedis('redis://127.0.0.1:1'); // the first Sentinel listed answers nothing
    closers.push(() => closeRedis(nothing));
    const url = `redis+sentinel://127.0.0.1:1,${hosts()}/${redis.name}?sentinelPassword=${encodeURIComponent(PASSWORD)}`;
    const { runner, dispatcher, timers, runs, close } = libraryHost({
      connection: url,
      prefix: 'su',
      logger: recordingLogger(),
    });
    closers.push(close);
    await Promise.all([runner.start(), dispatcher.start(), timers.connect()]);
    await timers.schedule({ key: 'through-sentinels', handler: 'note', delay: 0 });
    await waitFor(() => runs.length > 0, { timeoutMs: 15_000, what: 'the run' }); // deadline
    expect(runs).toEqual(['through-sentinels']);
  }, 60_000);

  it.each([
    [
      'without the Sentinels’ password',
      () => `redis+sentinel://${hosts()}/${redis.name}`,
      /^The Sentinels refused the connection \(NOAUTH/,
      '?sentinelPassword=<password>',
    ],
    [
      'with a master name the Sentinels do not know',
      () => `${redis.url.replace(`/${redis.name}?`, '/nosuch?')}`,
      /^The Sentinels know no primary by the master name in the Redis URL \(ERR No such master/,
      'SENTINEL MASTERS',
    ],
  ])(
    'a library start %s fails at once, saying what to write',
    async (_, url, message, fix) => {
      const { runner, dispatcher, timers, close } = libraryHost({
        connection: url(),
        prefix: 'su',
        logger: recordingLogger(),
      });
      closers.push(close);
      for (const started of [() => runner.start(), () => dispatcher.start(), () => timers.connect()]) {
        const at = Date.now();
        const refusal = await started().then(
          () => undefined,
          (error: unknown) => error,
        );
        expect(refusal).toMatchObject({ reason: 'invalid', field: 'connection' });
        expect((refusal as Error).message).toMatch(message);
        expect((refusal as { fix: string }).fix).toContain(fix);
        expect(Date.now() - at).toBeLessThan(AT_ONCE_MS);
      }
    },
    60_000,
  );

  it('the scheduler app with a wrong master name exits 1 at once with the reason, field and fix', async () => {
    const app = spawn(process.execPath, [join(DIST, 'apps', 'scheduler', 'src', 'main.js')], {
      env: { ...process.env, REDIS_URL: redis.url.replace(`/${redis.name}?`, '/nosuch?'), PORT: '0' },
    });
    let output = '';
    // Timed from the app's first line (Nest starting, its modules loaded), not from the spawn: loading
    // them took 13-22 s of a loaded 2-core host, and the refusal is what comes after.
    let at: number | undefined;
    app.stdout.on('data', (chunk: Buffer) => {
      at ??= Date.now();
      output += chunk.toString();
    });
    const [code] = (await once(app, 'exit')) as [number];
    expect(code).toBe(1);
    expect(output).toMatch(/^\{[^\n]*Starting Nest application/);
    expect(Date.now() - at!).toBeLessThan(AT_ONCE_MS * 2); // the refusal, not the 30 s start wait
    const fatal = output.split('\n').find((line) => line.includes('"level":"fatal"')) ?? '';
    expect(fatal).toContain('"reason":"invalid"');
    expect(fatal).toContain('"field":"connection"');
    expect(fatal).toContain('The Sentinels know no primary by the master name');
    expect(fatal).toContain('SENTINEL MASTERS');
    expect(fatal).not.toContain(PASSWORD);
  }, 30_000);
});

/**
 * `rediss+sentinel://` with Sentinels and Redis that listen with TLS alone: the apps reach both, given
 * only the URL and the CA (`NODE_EXTRA_CA_CERTS`, docs/operations.md "TLS"). The URL used to set only
 * ioredis's `tls`, which Sentinel mode ignores: the Sentinels were asked in plain TCP, and the primary
 * would have been too (ioredis's `sentinelTLS` and `enableTLSForSentinelMode`).
 */
describe('Sentinel over TLS', () => {
  let apps: AppProcess[] = [];

  afterAll(async () => {
    await killAll(apps);
  });

  it('a scheduler and a worker on the rediss+sentinel:// URL alone run a timer', async () => {
    expect(tlsRedis.url).toMatch(/^rediss\+sentinel:\/\//);
    const recordsClient = new Redis(records.url);
    try {
      const env = {
        ...clusterEnv(tlsRedis.url, { SUNDIAL_TEST_RECORD_URL: records.url }),
        NODE_EXTRA_CA_CERTS: tlsRedis.tlsCa ?? '',
      };
      apps = await Promise.all([
        spawnApp('scheduler', 'tls-scheduler', env),
        spawnApp('worker', 'tls-worker', env),
      ]);
      const created = await apps[0].api('POST', '/v1/timers', { key: 'tls', handler: 'record', delay: 0 });
      expect(created.status).toBe(201);
      await waitFor(async () => (await readRuns(recordsClient)).length > 0, {
        timeoutMs: 15_000, // deadline
        what: 'the run',
      });
    } finally {
      recordsClient.disconnect();
    }
  }, 60_000);
});
