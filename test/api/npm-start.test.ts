import { mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ChildEnd,
  childOutput,
  connects,
  DIST,
  ensureBuilt,
  freePort,
  type RedisCluster,
  type RedisSentinels,
  type RedisServer,
  spawnOwned,
  startRedis,
  startRedisCluster,
  startRedisSentinels,
  waitFor,
} from '@sundial/testing/harness';
import { bothReady, pidOfLine, running, spawnStart } from './npm-start-harness';

/**
 * The Redis deployments the cases start on, each started once for the suite, all at once beside the
 * build check (one after another, describe by describe, they took some 8 s of the suite's 26).
 */
let cluster: RedisCluster;
let sentinels: RedisSentinels;
let refusing: RedisServer;
let redis: RedisServer;
beforeAll(async () => {
  [cluster, sentinels, refusing, redis] = await Promise.all([
    startRedisCluster(3),
    startRedisSentinels({ sentinelPassword: 'watch' }),
    startRedis(),
    startRedis(),
    ensureBuilt(),
  ]);
}, 180_000);
afterAll(async () => {
  await Promise.all([cluster?.stop(), sentinels?.stop(), refusing?.stop(), redis?.stop()]);
});

/**
 * Issue 12 §3: `npm start` (dist/scripts/start.js) reads REDIS_URL with the apps' own parser, so a
 * Redis Cluster URL gets a scheduler and a worker that are ready — it used to PING it with a plain
 * `new Redis(url)`, which cannot read `redis+cluster://`, and then tried to start a redis-server there.
 */
describe('npm start on a Redis Cluster URL', () => {
  it('starts a scheduler and a worker that are ready, and stops them on SIGINT', async () => {
    await startsReady(cluster.url, async (port, workerPort) => {
      // Bound to 127.0.0.1 alone (no token is set): another address of the machine is refused. On Linux
      // 127.0.0.2 is one too, which a port bound to every interface (0.0.0.0, ::) takes.
      for (const appPort of [port, workerPort]) expect(await connects('127.0.0.2', appPort)).toBe(false);
      expect(await connects('127.0.0.1', port)).toBe(true);
    });
  }, 120_000);
});

/**
 * `npm start` where nothing answers at REDIS_URL starts a private redis-server, and so does one without
 * REDIS_URL, on SUNDIAL_START_REDIS_PORT (6380), never using the Redis a machine has on 6379; a closed terminal
 * (SIGHUP, which reaches start.js's process group and not the apps' own groups) stops the apps and that
 * redis-server before start.js exits, and so does the end of its parent (a killed npm's `sh -c`) — it
 * used to die of the hangup, or live on, and leave all three running.
 */
describe('npm start with a private redis-server', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sundial-start-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  // How start.js runs, and how its run ends: `npm start` runs it under `sh -c`, which a `kill` of npm
  // ends without passing the signal on (`; exit` keeps sh from exec-ing node, as dash does). The two
  // cases run side by side (`it.concurrent`), each in a directory of its own (the private redis-server
  // keeps its data under it) on ports of its own: most of each is waiting for the apps to start and end.
  const script = join(DIST, 'scripts/start.js');
  it.concurrent.each([
    [
      'without REDIS_URL, and a closed terminal (SIGHUP)',
      process.execPath,
      [script],
      (redisPort: number) => ({ REDIS_URL: undefined, SUNDIAL_START_REDIS_PORT: String(redisPort) }),
      'SIGHUP',
      { code: 0, signal: null },
    ],
    [
      'at REDIS_URL, and its parent shell killed',
      'sh',
      ['-c', `"${process.execPath}" "${script}"; exit $?`],
      (redisPort: number) => ({ REDIS_URL: `redis://127.0.0.1:${redisPort}` }),
      'SIGKILL',
      { code: null, signal: 'SIGKILL' },
    ],
  ] as const)(
    'starts one where nothing answers %s, leaving no process behind',
    async (_, command, args, redisEnv, signal, end) => {
      const [redisPort, port, workerPort] = [await freePort(), await freePort(), await freePort()];
      const start = spawnOwned(command, [...args], {
        cwd: mkdtempSync(join(dir, 'case-')),
        env: {
          ...process.env,
          ...redisEnv(redisPort),
          PORT: String(port),
          WORKER_PORT: String(workerPort),
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      // Every process start.js ran, by pid: the redis-server's lines start with it, the apps' carry it.
      // The output ends when start.js (which holds the pipes, the apps and redis-server have their own) exits.
      const pids = new Set<number>();
      const output = childOutput(start, (line) => {
        const pid = pidOfLine(line);
        if (pid !== undefined) pids.add(pid);
      });
      const alive = () => [...pids].filter((pid) => running(pid));
      try {
        await bothReady(port, workerPort);
        expect(output.lines).toContainEqual(expect.stringContaining('starting a private redis-server'));
        // where to go next, in one line among the apps' JSON logs
        const api = `http://127.0.0.1:${port}`;
        const ready =
          `[start] ready: API ${api}/v1/timers, its docs ${api}/docs, the operator UI ${api}/ui/; ` +
          `the worker on http://127.0.0.1:${workerPort}; Redis at redis://127.0.0.1:${redisPort}. ` +
          'Ctrl-C stops them and the private redis-server.';
        await waitFor(() => output.lines.includes(ready), { timeoutMs: 5_000, what: 'the ready line' }); // deadline: left as soon as the line comes
        expect(alive()).toHaveLength(3);
        let ended: ChildEnd | undefined;
        void output.ended.then((how) => (ended = how));
        start.kill(signal);
        await waitFor(() => ended !== undefined && alive().length === 0, {
          timeoutMs: 30_000,
          what: 'start.js and every process it ran to exit',
        });
        expect(ended).toEqual(end);
      } finally {
        for (const pid of alive()) process.kill(pid, 'SIGKILL');
      }
    },
    120_000,
  );
});

/**
 * `npm start` where a Redis answers REDIS_URL but refuses it (a wrong password): stops at once with
 * Redis's own error. It used to take the refusal for "nothing answers", start a private redis-server on
 * that Redis's port, and stop with "redis-server exited at start".
 */
describe('npm start on a Redis that refuses REDIS_URL', () => {
  it("exits 1 with Redis's refusal and how to fix it, starting nothing", async () => {
    const output = await refusedStart(`redis://nobody:wrong@127.0.0.1:${refusing.port}`);
    expect(output.lines).toEqual([
      '[start] The Redis at REDIS_URL answers, but refuses this connection: ' +
        'WRONGPASS invalid username-password pair or user is disabled.',
      'Fix the user and password in REDIS_URL (redis://user:password@host:port), or point it at another Redis.',
    ]);
  }, 60_000);
});

/**
 * `npm start` where another process holds PORT (a newcomer's other dev server on 3000): the scheduler's
 * fatal line names the port and says what to do, and start.js says which app stopped the cluster. It used
 * to log only Node's `listen EADDRINUSE` under "scheduler could not start", and then the worker's own
 * shutdown lines, with nothing saying which came first.
 */
describe('npm start when PORT is taken', () => {
  let taken: Server;
  beforeAll(async () => {
    taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  });
  afterAll(() => {
    taken?.close();
  });

  it('exits 1 naming the port and the fix, and which app stopped the rest', async () => {
    const port = (taken.address() as AddressInfo).port;
    const start = spawnStart({ REDIS_URL: redis.url }, port, await freePort(), {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = childOutput(start);
    expect(await output.ended).toEqual({ code: 1, signal: null });
    const fatal = output.lines
      .filter((line) => line.startsWith('[scheduler] {'))
      .map((line) => JSON.parse(line.slice('[scheduler] '.length)) as Record<string, unknown>)
      .find((line) => line.level === 'fatal');
    expect(fatal).toMatchObject({
      msg: `scheduler could not start: port ${port} on 127.0.0.1 is in use by another process`,
      fix: expect.stringContaining('set PORT'),
    });
    expect(output.lines).toContain(
      '[start] the scheduler exited (code 1), see its lines above: stopping the rest',
    );
  }, 60_000);
});

/**
 * `npm start` through Sentinels with a password of their own (docs/operations.md "Redis settings"):
 * the URL's query gives it, and a master name they do not know stops it at once saying so. It used to
 * take that for "nothing answers" and say to start the Sentinel deployment, with the URL's password.
 */
describe('npm start on a Sentinel URL', () => {
  it('starts a scheduler and a worker that are ready, and stops them on SIGINT', async () => {
    await startsReady(sentinels.url, async () => undefined);
  }, 120_000);

  it('exits 1 on a master name the Sentinels do not know, saying what to write', async () => {
    const output = await refusedStart(sentinels.url.replace(`/${sentinels.name}?`, '/nosuch?'));
    expect(output.lines).toEqual([
      '[start] The Sentinels know no primary by the master name in the Redis URL (ERR No such master with that name).',
      expect.stringContaining('SENTINEL MASTERS'),
    ]);
  }, 60_000);
});

/** `npm start` on `redisUrl` gets both apps ready (then `check`s them), and stops them on SIGINT, exiting 0. */
async function startsReady(
  redisUrl: string,
  check: (port: number, workerPort: number) => Promise<void>,
): Promise<void> {
  const [port, workerPort] = [await freePort(), await freePort()];
  const start = spawnStart({ REDIS_URL: redisUrl, LOG_LEVEL: 'warn' }, port, workerPort, {
    stdio: 'ignore',
  });
  const exited = new Promise<number | null>((resolve) => start.once('exit', (code) => resolve(code)));
  try {
    await bothReady(port, workerPort);
    await check(port, workerPort);
  } finally {
    start.kill('SIGINT'); // forwarded to both apps, which drain and exit 0
  }
  expect(await exited).toBe(0);
}

/** `npm start` on `redisUrl`, which must exit 1 at once: its output. */
async function refusedStart(redisUrl: string): Promise<{ lines: string[] }> {
  const [port, workerPort] = [await freePort(), await freePort()];
  // cwd: where a private redis-server would keep its data, were one started.
  const start = spawnStart({ REDIS_URL: redisUrl }, port, workerPort, {
    cwd: tmpdir(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = childOutput(start);
  expect(await output.ended).toEqual({ code: 1, signal: null });
  return output;
}
