/**
 * `npm start`: a local cluster in one terminal — Redis (REDIS_URL, or a private redis-server with AOF
 * in ./.sundial/redis when nothing answers there; without REDIS_URL, always that private one, on
 * SUNDIAL_START_REDIS_PORT, 6380; never a second one beside a live one there, own-redis-dir.ts, nor
 * beside another npm start starting one, own-redis-lock.ts), the
 * scheduler on PORT (3000) and one worker on WORKER_PORT (3001),
 * their output prefixed. Ctrl-C, SIGTERM, SIGHUP (a closed terminal) or the parent's
 * end (a killed npm) stops them; exits when they (and the private redis-server) have.
 */
import { spawn, spawnSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { ReplyError } from 'ioredis';
import '../libs/server/src/register-paths';
import { isAwayNotRefused, openRedis, parseRedisUrl, sentinelRefusal, urlForDisplay } from '@sundial/redis';
import {
  inspectOwnDir,
  isOwnRedisDir,
  OWN_REDIS_DIR,
  pidfileFor,
  redisDir,
  removePidfiles,
} from './own-redis-dir';
import { releaseStartLock, START_LOCK, takeStartLock } from './own-redis-lock';

/**
 * Without REDIS_URL, npm start runs a Redis of its own on this port rather than using whatever answers on
 * 6379: that one is often another app's (or the machine's shared) Redis, and a newcomer's first command
 * should not write Sundial's keys into it unasked. REDIS_URL=redis://127.0.0.1:6379 uses it on purpose.
 */
const OWN_REDIS_PORT = 6380;
const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
const DIST = join(__dirname, '..');
/** How long start.js looks for both apps to be ready before it gives up saying so (their lines say why). */
const READY_WAIT_MS = 60_000;
const READY_POLL_MS = 250;

async function main(): Promise<void> {
  // The terminal or pipe this writes to may go before the apps do (a closed terminal, a killed npm):
  // their last lines are then lost, and this process goes on to stop them.
  for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);
  const given = process.env.REDIS_URL;
  const redisUrl = given || `redis://127.0.0.1:${ownRedisPort()}`;
  let privateRedis: ChildProcess | undefined;
  if (!(await answersPing(redisUrl))) privateRedis = await startPrivateRedis(redisUrl);
  else if (!given) await checkOwnRedis(redisUrl);
  // A local cluster, without an API token unless one is set: its ports on loopback only, so that no
  // other machine of the network can drive it (SUNDIAL_LISTEN_HOST=0.0.0.0 opens them).
  const env = {
    ...process.env,
    REDIS_URL: redisUrl,
    SUNDIAL_LISTEN_HOST: process.env.SUNDIAL_LISTEN_HOST || '127.0.0.1',
  };
  const ports = { scheduler: process.env.PORT || '3000', worker: process.env.WORKER_PORT || '3001' };
  const named = Object.entries({
    scheduler: run('scheduler', process.execPath, [join(DIST, 'apps/scheduler/src/main.js')], {
      ...env,
      PORT: ports.scheduler,
    }),
    worker: run('worker', process.execPath, [join(DIST, 'apps/worker/src/main.js')], {
      ...env,
      PORT: ports.worker,
    }),
  });
  const apps = named.map(([, app]) => app);
  // Children run in their own process groups (so Ctrl-C reaches them once, from here).
  let stopping = false;
  const stopAll = (signal: NodeJS.Signals): void => {
    stopping = true;
    for (const app of apps) if (app.exitCode === null && app.signalCode === null) app.kill(signal);
  };
  process.on('SIGINT', () => stopAll('SIGINT'));
  process.on('SIGTERM', () => stopAll('SIGTERM'));
  // A closed terminal: its hangup reaches this process group only, not the apps' own groups.
  process.on('SIGHUP', () => stopAll('SIGTERM'));
  // `npm start` runs this under `sh -c`, which dies of a `kill` of npm without passing it on: a parent
  // gone (this process handed to init) stops the cluster too, once, unless it is stopping already.
  const parent = process.ppid;
  const watch = setInterval(() => {
    if (process.ppid === parent && !stopping) return;
    clearInterval(watch);
    if (!stopping) stopAll('SIGTERM');
  }, 500);
  void sayWhenReady(env.SUNDIAL_LISTEN_HOST, ports, redisUrl, privateRedis !== undefined, () => stopping);
  const codes = await Promise.all(
    named.map(
      ([name, app]) =>
        new Promise<number>((done) =>
          app.once('exit', (code) => {
            // One app gone on its own means the cluster is broken: stop the other one too, saying why
            // (its own lines went by; the other's shutdown lines that follow are not a second failure).
            if (!stopping) {
              console.error(
                `[start] the ${name} exited (code ${code}), see its lines above: stopping the rest`,
              );
              stopAll('SIGTERM');
            }
            done(code ?? 1);
          }),
        ),
    ),
  );
  if (privateRedis) await stopChild(privateRedis, 'SIGTERM');
  process.exit(Math.max(...codes));
}

/**
 * Whether Redis answers at `url`: one node, a Cluster (any of its nodes) or Sentinel's primary. A Redis
 * that answers with a refusal (a wrong password, a user the ACL refuses) stops `npm start` with its
 * error: it is no place to start a private redis-server (that could only fail to bind its port), and
 * no place to run the apps. One answering "not now" (`LOADING`, `BUSY`, …) counts as answering: the
 * apps wait for it at start.
 */
async function answersPing(url: string): Promise<boolean> {
  // One try, no reconnects: a first command fails at once when nothing answers.
  const once = () => null;
  const client = openRedis({
    url,
    maxRetriesPerRequest: 0,
    connectTimeout: 1_000,
    retryStrategy: once,
    sentinelRetryStrategy: once,
  });
  try {
    return (await client.ping()) === 'PONG';
  } catch (error) {
    // Sentinels that know no such master, or refuse the AUTH: not "nothing answers"
    const bySentinel = sentinelRefusal(error);
    if (bySentinel) return fail(`${bySentinel.message}\n${bySentinel.fix}`);
    if (!(error instanceof Error && error instanceof ReplyError)) return false;
    // "not now" (loading its data, a busy script, a failover): the apps wait for it at start
    if (isAwayNotRefused(error)) return true;
    return fail(
      `The Redis at REDIS_URL answers, but refuses this connection: ${error.message}\n` +
        'Fix the user and password in REDIS_URL (redis://user:password@host:port), or point it at another Redis.',
    );
  } finally {
    client.disconnect();
  }
}

async function startPrivateRedis(url: string): Promise<ChildProcess> {
  // A Cluster or Sentinel deployment is the user's to start: only a single local node is started here.
  if (parseRedisUrl(url).kind !== 'node')
    fail(
      `Nothing answers at REDIS_URL=${urlForDisplay(url)}: start that Redis Cluster or Sentinel deployment first.`,
    );
  const { hostname, port } = new URL(url);
  if (!LOCAL_HOSTS.has(hostname))
    fail(
      `Nothing answers at REDIS_URL=${urlForDisplay(url)}, and it is not a local address to start Redis on.`,
    );
  if (spawnSync('redis-server', ['--version']).status !== 0) {
    fail(
      `Nothing answers at ${url} and redis-server is not installed. Install it, then run npm start again:\n` +
        '  Debian/Ubuntu:  sudo apt-get install -y redis-server\n' +
        '  macOS:          brew install redis\n' +
        'or point REDIS_URL at a running Redis.',
    );
  }
  const dir = OWN_REDIS_DIR;
  const redisPort = port || '6379';
  // Held from this check until the redis-server answers (its pidfile written), so that two npm starts
  // at one instant do not both find none and both start one on the same directory (own-redis-lock.ts).
  const holder = takeStartLock();
  if (holder !== undefined)
    fail(
      `Another npm start (pid ${holder}) is starting its own redis-server in ${dir} (it holds ${START_LOCK}): ` +
        'a second one must not write the same directory.\n' +
        'Run npm start again once that one has started (its redis-server is then used, or named with how to ' +
        `use it), or, if pid ${holder} is no npm start, remove the lock: rm -r ${START_LOCK}`,
    );
  const { running, gone } = await inspectOwnDir();
  // Two redis-servers must not write one AOF directory: one left running there on another port (by an
  // npm start killed with SIGKILL) is to be used or stopped first. On this port it would have answered.
  if (running && String(running.port) !== redisPort) {
    const other = `redis://127.0.0.1:${running.port}`;
    fail(
      `npm start's own redis-server already runs on port ${running.port} (pid ${running.pid}) with its data in ` +
        `${dir}: a second one must not write the same directory.\n` +
        `Use it: SUNDIAL_START_REDIS_PORT=${running.port} npm start (or REDIS_URL=${other}), ` +
        `or stop it first: redis-cli -p ${running.port} shutdown`,
    );
  }
  mkdirSync(dir, { recursive: true });
  removePidfiles(gone);
  console.log(`[start] nothing answers at ${url}: starting a private redis-server with AOF in ${dir}`);
  const redis = run('redis', 'redis-server', [
    '--port',
    redisPort,
    '--bind',
    '127.0.0.1',
    '--dir',
    dir,
    '--pidfile',
    pidfileFor(redisPort),
    '--appendonly',
    'yes',
    '--maxmemory-policy',
    'noeviction',
  ]);
  for (const deadline = Date.now() + 10_000; Date.now() < deadline;) {
    if (redis.exitCode !== null) fail('redis-server exited at start; see its output above.');
    if (await answersPing(url)) {
      releaseStartLock();
      return redis;
    }
    await new Promise((wake) => setTimeout(wake, 100));
  }
  redis.kill('SIGKILL');
  return fail(`redis-server did not answer PING at ${url} within 10 s.`);
}

/** SUNDIAL_START_REDIS_PORT: where npm start's own Redis listens when REDIS_URL is not set. */
function ownRedisPort(): number {
  const text = process.env.SUNDIAL_START_REDIS_PORT;
  if (text === undefined || text === '') return OWN_REDIS_PORT;
  const port = Number(text);
  if (Number.isInteger(port) && port >= 1 && port <= 65535) return port;
  return fail(
    `SUNDIAL_START_REDIS_PORT=${JSON.stringify(text)} is not a port: write an integer from 1 to 65535, ` +
      `or leave it unset for ${OWN_REDIS_PORT}.`,
  );
}

/**
 * Without REDIS_URL a Redis already answering on npm start's own port is used only when it is that own
 * one (its data in this directory's ./.sundial/redis: left running by an npm start killed with SIGKILL):
 * any other Redis there is someone else's, which this never writes into unasked.
 */
async function checkOwnRedis(url: string): Promise<void> {
  const dir = await redisDir(url);
  if (dir !== undefined && isOwnRedisDir(dir)) {
    console.log(
      `[start] npm start's own redis-server already runs at ${url} (AOF in ${OWN_REDIS_DIR}): using it`,
    );
    return;
  }
  fail(
    `Another Redis answers at ${url}, where npm start runs its own when REDIS_URL is not set` +
      `${dir === undefined ? '' : ` (its data is in ${dir}, not ${OWN_REDIS_DIR})`}.\n` +
      `Set REDIS_URL=${url} to use that Redis, or SUNDIAL_START_REDIS_PORT to run npm start's own on another port.`,
  );
}

/**
 * Once both apps answer /health/ready, one line saying where to go next (the README's curl, the UI, the
 * API's docs): their own lines are JSON logs, in which a newcomer does not see that the cluster is up.
 */
async function sayWhenReady(
  listenHost: string,
  ports: { scheduler: string; worker: string },
  redisUrl: string,
  withRedis: boolean,
  stopping: () => boolean,
): Promise<void> {
  const host = ['0.0.0.0', '::'].includes(listenHost) ? '127.0.0.1' : listenHost;
  const base = (port: string) => `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const ready = async (port: string) =>
    (await fetch(`${base(port)}/health/ready`).catch(() => undefined))?.ok === true;
  for (const deadline = Date.now() + READY_WAIT_MS; Date.now() < deadline && !stopping();) {
    if ((await ready(ports.scheduler)) && (await ready(ports.worker))) {
      const api = base(ports.scheduler);
      console.log(
        `[start] ready: API ${api}/v1/timers, its docs ${api}/docs, the operator UI ${api}/ui/; ` +
          `the worker on ${base(ports.worker)}; Redis at ${urlForDisplay(redisUrl)}. ` +
          `Ctrl-C stops them${withRedis ? ' and the private redis-server' : ''}.`,
      );
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS));
  }
}

/** Spawns a child in its own process group and copies its output, each line prefixed with its name. */
function run(
  name: string,
  command: string,
  args: string[],
  env: NodeJS.ProcessEnv = process.env,
): ChildProcess {
  const child = spawn(command, args, { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const prefix = `[${name}] `;
  createInterface({ input: child.stdout! }).on('line', (line) => process.stdout.write(prefix + line + '\n'));
  createInterface({ input: child.stderr! }).on('line', (line) => process.stderr.write(prefix + line + '\n'));
  child.on('error', (error) => fail(`${name} could not start: ${error.message}`));
  return child;
}

function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((done) => {
    child.once('exit', () => done());
    child.kill(signal);
  });
}

function fail(message: string): never {
  console.error(`[start] ${message}`);
  process.exit(1);
}

main().catch((error: unknown) => fail(String(error)));
