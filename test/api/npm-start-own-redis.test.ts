import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import {
  type ChildEnd,
  childOutput,
  connects,
  ensureBuilt,
  freePort,
  type RedisServer,
  startRedis,
  waitFor,
} from '@sundial/testing/harness';
import { bothReady, leaveOwnRedisRunning, type LeftRedis, running, spawnStart } from './npm-start-harness';

/**
 * `npm start` without REDIS_URL where another Redis answers on its own port (someone's second Redis on
 * 6380): it writes nothing into that Redis and says how to use it or move its own; one it started itself
 * earlier in this directory (left running by a SIGKILL) is used.
 */
describe('npm start without REDIS_URL, its port answering', () => {
  beforeAll(() => ensureBuilt(), 180_000);

  it('exits 1 at another Redis, saying how to use it or where to run its own, writing nothing', async () => {
    const other = await startRedis();
    const start = spawnStart(
      { REDIS_URL: undefined, SUNDIAL_START_REDIS_PORT: String(other.port) },
      await freePort(),
      await freePort(),
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const output = childOutput(start);
    expect(await output.ended).toEqual({ code: 1, signal: null });
    const keys = new Redis(other.url);
    const written = await keys.dbsize().finally(() => keys.disconnect());
    await other.stop();
    expect(written).toBe(0);
    expect(output.lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^\\[start\\] Another Redis answers at redis://127\\.0\\.0\\.1:${other.port}, where npm start runs its own ` +
            'when REDIS_URL is not set \\(its data is in .+, not .+/\\.sundial/redis\\)\\.$',
        ),
      ),
      `Set REDIS_URL=redis://127.0.0.1:${other.port} to use that Redis, or SUNDIAL_START_REDIS_PORT to run npm start's own on another port.`,
    ]);
  }, 60_000);

  it("uses npm start's own Redis left running in this directory, and leaves it running", async () => {
    const own = await startRedis();
    const cwd = mkdtempSync(join(tmpdir(), 'sundial-start-own-'));
    mkdirSync(join(cwd, '.sundial'));
    symlinkSync(own.dir, join(cwd, '.sundial', 'redis')); // where a private one started here keeps its data
    const [port, workerPort] = [await freePort(), await freePort()];
    const start = spawnStart(
      { REDIS_URL: undefined, SUNDIAL_START_REDIS_PORT: String(own.port), LOG_LEVEL: 'warn' },
      port,
      workerPort,
      { cwd, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const output = childOutput(start);
    try {
      await bothReady(port, workerPort);
    } finally {
      start.kill('SIGINT'); // forwarded to both apps, which drain and exit 0
    }
    expect(await output.ended).toEqual({ code: 0, signal: null });
    expect(output.lines).toContain(
      `[start] npm start's own redis-server already runs at redis://127.0.0.1:${own.port} ` +
        `(AOF in ${join(cwd, '.sundial', 'redis')}): using it`,
    );
    const client = new Redis(own.url);
    const [pong, partitions] = await Promise.all([client.ping(), client.get('sundial:partitions')]);
    client.disconnect();
    await own.stop();
    rmSync(cwd, { recursive: true, force: true });
    expect({ pong, partitions }).toEqual({ pong: 'PONG', partitions: '1' });
  }, 120_000);

  it('exits 1 on a SUNDIAL_START_REDIS_PORT that is no port', async () => {
    const start = spawnStart({ REDIS_URL: undefined, SUNDIAL_START_REDIS_PORT: '70000' }, 1, 2, {
      cwd: tmpdir(), // where a private redis-server would keep its data, were one started
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const output = childOutput(start);
    expect(await output.ended).toEqual({ code: 1, signal: null });
    expect(output.lines).toEqual([
      '[start] SUNDIAL_START_REDIS_PORT="70000" is not a port: write an integer from 1 to 65535, or leave it unset for 6380.',
    ]);
  }, 60_000);
});

/**
 * `npm start` where its own redis-server, left running by an `npm start` killed with SIGKILL, still runs
 * on another port than the one it would start on: two redis-servers must not write one ./.sundial/redis
 * (one AOF directory), so it stops, naming that one and how to use or stop it. It used to start a second.
 * A pidfile that names no live redis-server of this directory (its process gone, its pid another
 * process's) does not stop it.
 */
describe('npm start where its own redis-server still runs on another port', () => {
  let cwd: string;
  let dir: string;
  let first: LeftRedis;
  let other: RedisServer | undefined;
  beforeAll(async () => {
    await ensureBuilt();
    cwd = mkdtempSync(join(tmpdir(), 'sundial-start-left-'));
    dir = join(realpathSync(cwd), '.sundial', 'redis');
    first = await leaveOwnRedisRunning(cwd, await freePort());
    const client = new Redis(first.url);
    await client.config('SET', 'appendfsync', 'always'); // in its AOF before a SIGKILL below
    await client.set('left:running', 'kept');
    client.disconnect();
  }, 180_000);
  afterAll(async () => {
    first?.kill();
    await other?.stop();
    if (cwd) rmSync(cwd, { recursive: true, force: true });
  });

  it.each([
    [
      'SUNDIAL_START_REDIS_PORT',
      (port: number) => ({ REDIS_URL: undefined, SUNDIAL_START_REDIS_PORT: String(port) }),
    ],
    ['a local REDIS_URL nothing answers', (port: number) => ({ REDIS_URL: `redis://127.0.0.1:${port}` })],
  ])(
    'with %s: exits 1 naming it and both fixes, starting no second one, the first keeping its data',
    async (_, redisEnv) => {
      const port = await freePort();
      const files = readdirSync(dir);
      const start = spawnStart(redisEnv(port), await freePort(), await freePort(), {
        cwd,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const output = childOutput(start);
      let ended: ChildEnd | undefined;
      void output.ended.then((how) => (ended = how));
      const second = () => output.lines.some((line) => line.includes('starting a private redis-server'));
      // deadline: left as soon as it exits, or starts a second one (then stopped once ready, below)
      await waitFor(() => ended !== undefined || second(), { timeoutMs: 30_000, what: 'npm start to exit' });
      try {
        expect(output.lines).toEqual([
          `[start] npm start's own redis-server already runs on port ${new URL(first.url).port} (pid ${first.pid}) ` +
            `with its data in ${dir}: a second one must not write the same directory.`,
          `Use it: SUNDIAL_START_REDIS_PORT=${new URL(first.url).port} npm start (or REDIS_URL=${first.url}), ` +
            `or stop it first: redis-cli -p ${new URL(first.url).port} shutdown`,
        ]);
        expect(ended).toEqual({ code: 1, signal: null });
        expect(await connects('127.0.0.1', port)).toBe(false);
        expect(readdirSync(dir)).toEqual(files);
        const client = new Redis(first.url);
        const [info, kept] = await Promise.all([client.info('server'), client.get('left:running')]);
        client.disconnect();
        expect({ pid: /^process_id:(\d+)/m.exec(info)?.[1], kept }).toEqual({
          pid: String(first.pid),
          kept: 'kept',
        });
      } finally {
        if (second()) {
          await waitFor(() => output.lines.some((line) => line.startsWith('[start] ready:')), {
            timeoutMs: 60_000,
          }); // deadline
          start.kill('SIGINT'); // stops its apps and its redis-server
          await output.ended;
        }
      }
    },
    120_000,
  );

  it('starts where pidfiles name no live redis-server of this directory, with the data there', async () => {
    first.kill(); // as a crash would: its pidfile is left behind
    await waitFor(() => !running(first.pid), { what: 'the first redis-server to end' });
    const left = readdirSync(dir).filter((name) => name.endsWith('.pid'));
    expect(left).toHaveLength(1);
    // A pid alive that is not the Redis on its port (this process), and a Redis's own pid whose data is
    // elsewhere (another Redis, with its pidfile copied here as it were).
    other = await startRedis();
    const probe = new Redis(other.url);
    const otherPid = /^process_id:(\d+)/m.exec(
      await probe.info('server').finally(() => probe.disconnect()),
    )![1];
    const foreign = [`redis-server-${await freePort()}.pid`, `redis-server-${other.port}.pid`];
    writeFileSync(join(dir, foreign[0]), `${process.pid}\n`);
    writeFileSync(join(dir, foreign[1]), `${otherPid}\n`);
    const [redisPort, port, workerPort] = [await freePort(), await freePort(), await freePort()];
    const start = spawnStart(
      { REDIS_URL: undefined, SUNDIAL_START_REDIS_PORT: String(redisPort), LOG_LEVEL: 'warn' },
      port,
      workerPort,
      { cwd, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const output = childOutput(start);
    let kept: string | null;
    try {
      // an exit before both apps are ready fails at once, with its lines
      const exited = output.ended.then((how) => {
        throw new Error(`npm start exited (${JSON.stringify(how)}):\n${output.lines.join('\n')}`);
      });
      await Promise.race([bothReady(port, workerPort), exited]);
      const client = new Redis(`redis://127.0.0.1:${redisPort}`);
      kept = await client.get('left:running').finally(() => client.disconnect());
    } finally {
      start.kill('SIGINT'); // stops both apps and its redis-server, which removes its pidfile
    }
    expect(await output.ended).toEqual({ code: 0, signal: null });
    expect(output.lines).toContainEqual(expect.stringContaining('starting a private redis-server'));
    expect(kept).toBe('kept');
    // the pidfile of the process gone is removed; those of live processes are not npm start's to remove
    expect(
      readdirSync(dir)
        .filter((name) => name.endsWith('.pid'))
        .sort(),
    ).toEqual([...foreign].sort());
  }, 120_000);
});
