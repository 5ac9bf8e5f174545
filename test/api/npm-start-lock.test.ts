import type { ChildProcess } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ChildOutput,
  childOutput,
  connects,
  ensureBuilt,
  freePort,
  waitFor,
} from '@sundial/testing/harness';
import { bothReady, running, spawnStart } from './npm-start-harness';

const STARTING = 'starting a private redis-server';

/**
 * Two `npm start`s at one instant in one directory, without REDIS_URL and nothing answering on their
 * ports (here two different ones): each checked ./.sundial/redis for a live redis-server, found none
 * (neither had started one yet) and started one, two redis-servers writing one AOF directory. The lock
 * ./.sundial/redis/npm-start.lock, held from that check until the redis-server answers, lets one start
 * and stops the other, naming it. The race is made certain, not left to chance: `redis-server` on the
 * starts' PATH is a wrapper that holds every server until both starts have decided (started one, or
 * exited), so each start's check runs while no redis-server of the other is up.
 */
describe('npm start: two at one instant start one redis-server in ./.sundial/redis', () => {
  let bin: string;
  let gate: string;
  const cwds: string[] = [];
  beforeAll(async () => {
    await ensureBuilt();
    bin = mkdtempSync(join(tmpdir(), 'sundial-start-bin-'));
    gate = join(bin, 'open');
    const real = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).stdout.trim();
    const wrapper = join(bin, 'redis-server');
    writeFileSync(
      wrapper,
      '#!/bin/sh\n' +
        `[ "$1" = --version ] || while [ ! -e '${gate}' ]; do sleep 0.02; done\n` +
        `exec '${real}' "$@"\n`,
    );
    chmodSync(wrapper, 0o755);
  }, 180_000);
  afterAll(() => {
    for (const dir of [bin, ...cwds]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** A fresh directory to run npm start in, and its ./.sundial/redis. */
  function directory(): { cwd: string; dir: string } {
    const cwd = mkdtempSync(join(tmpdir(), 'sundial-start-lock-'));
    cwds.push(cwd);
    return { cwd, dir: join(realpathSync(cwd), '.sundial', 'redis') };
  }

  async function start(cwd: string, redisPort: number): Promise<Start> {
    const [port, workerPort] = [await freePort(), await freePort()];
    const env = {
      REDIS_URL: undefined,
      SUNDIAL_START_REDIS_PORT: String(redisPort),
      PATH: `${bin}:${process.env.PATH}`,
      LOG_LEVEL: 'warn',
    };
    const child = spawnStart(env, port, workerPort, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    const output = childOutput(child);
    const start: Start = { child, output, redisPort, port, workerPort, ended: undefined };
    void output.ended.then((how) => (start.ended = how));
    return start;
  }

  it('one starts its redis-server; the other exits 1 naming the lock and the fix, writing nothing', async () => {
    rmSync(gate, { force: true });
    const { cwd, dir } = directory();
    const starts = await Promise.all([start(cwd, await freePort()), start(cwd, await freePort())]);
    try {
      // deadline: each has started its (held) redis-server or exited
      await waitFor(() => starts.every((one) => one.ended !== undefined || started(one)), {
        timeoutMs: 30_000,
        what: 'both npm starts to decide',
      });
      expect(starts.filter(started).map((one) => one.redisPort)).toHaveLength(1);
      const winner = starts.find(started);
      const loser = starts.find((one) => one !== winner)!;
      writeFileSync(gate, '');
      await bothReady(winner!.port, winner!.workerPort);
      const lock = join(dir, 'npm-start.lock');
      expect(loser.ended).toEqual({ code: 1, signal: null });
      expect(loser.output.lines).toEqual([
        `[start] Another npm start (pid ${winner!.child.pid}) is starting its own redis-server in ${dir} ` +
          `(it holds ${lock}): a second one must not write the same directory.`,
        'Run npm start again once that one has started (its redis-server is then used, or named with how to ' +
          `use it), or, if pid ${winner!.child.pid} is no npm start, remove the lock: rm -r ${lock}`,
      ]);
      // one redis-server in the directory, the winner's; the lock released once it answered
      expect(livePidfiles(dir)).toEqual([`redis-server-${winner!.redisPort}.pid`]);
      expect(await connects('127.0.0.1', loser.redisPort)).toBe(false);
      expect(existsSync(lock)).toBe(false);
      const names = readdirSync(dir);
      expect(names.filter((name) => name.startsWith('npm-start.lock'))).toEqual([]);
      expect(names.filter((name) => name.includes(String(loser.redisPort)))).toEqual([]);
    } finally {
      writeFileSync(gate, '');
      await stopAll(starts, dir);
    }
  }, 180_000);

  it('a lock left by an npm start gone (its pid dead) does not stop the next', async () => {
    writeFileSync(gate, '');
    const { cwd, dir } = directory();
    mkdirSync(dir, { recursive: true });
    const dead = spawnSync(process.execPath, ['-e', '']).pid;
    expect(running(dead)).toBe(false);
    // the lock as a start killed holding it leaves it: its entry, named by its pid (own-redis-lock.ts)
    mkdirSync(join(dir, 'npm-start.lock'));
    writeFileSync(join(dir, 'npm-start.lock', `${dead}.0a1b2c3d`), '');
    const one = await start(cwd, await freePort());
    try {
      const exited = one.output.ended.then((how) => {
        throw new Error(`npm start exited (${JSON.stringify(how)}):\n${one.output.lines.join('\n')}`);
      });
      await Promise.race([bothReady(one.port, one.workerPort), exited]);
      expect(started(one)).toBe(true);
      expect(livePidfiles(dir)).toEqual([`redis-server-${one.redisPort}.pid`]);
      expect(readdirSync(dir).filter((name) => name.startsWith('npm-start.lock'))).toEqual([]);
    } finally {
      await stopAll([one], dir);
    }
  }, 120_000);
});

interface Start {
  child: ChildProcess;
  output: ChildOutput;
  redisPort: number;
  port: number;
  workerPort: number;
  ended: { code: number | null; signal: NodeJS.Signals | null } | undefined;
}

function started(start: Start): boolean {
  return start.output.lines.some((line) => line.includes(STARTING));
}

/** The pidfiles in `dir` whose redis-server runs. */
function livePidfiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((name) => /^redis-server-\d+\.pid$/.test(name))
    .filter((name) => running(Number(readFileSync(join(dir, name), 'utf8').trim())))
    .sort();
}

/**
 * Stops each start still running once its apps are ready (SIGINT: its apps and its redis-server; its
 * handler is set once they are spawned), then any redis-server of `dir` still running.
 */
async function stopAll(starts: Start[], dir: string): Promise<void> {
  for (const one of starts) {
    if (one.ended !== undefined) continue;
    if (started(one)) await bothReady(one.port, one.workerPort).catch(() => undefined);
    one.child.kill('SIGINT');
  }
  await Promise.all(starts.map((one) => one.output.ended));
  for (const name of existsSync(dir) ? livePidfiles(dir) : []) {
    process.kill(Number(readFileSync(join(dir, name), 'utf8').trim()), 'SIGTERM');
  }
}
