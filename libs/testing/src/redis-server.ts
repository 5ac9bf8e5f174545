import { type ChildProcess, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { spawnOwned } from './owned-child';

/** A private redis-server for one test suite: never the shared one on 6379. */
export interface RedisServer {
  url: string;
  port: number;
  dir: string;
  /** Ends it at once (SIGKILL), as a crash would; `stop()` then only removes its dir. */
  kill(): void;
  /** Freezes it (SIGSTOP: connections stay open, nothing answers) or thaws it (SIGCONT). */
  signal(signal: 'SIGSTOP' | 'SIGCONT'): void;
  stop(): Promise<void>;
  /**
   * An outage: shuts the server down, waits `downMs`, starts it again on the same port and dir (its data
   * survives only with persistence on, e.g. args `--appendonly yes --appendfsync always`).
   */
  restart(downMs: number): Promise<void>;
  /** The port it also listens on with TLS, when started with `tlsArgs`. */
  tlsPort?: number;
}

export interface StartRedisOptions {
  /** Extra redis-server arguments, e.g. `['--maxmemory-policy', 'allkeys-lru']`; later ones win. */
  args?: string[];
  /** Text of a config file written into its dir and given first (Sentinel keeps its state there). */
  config?: string;
  /**
   * Also listen with TLS: the arguments for a TLS port (`--tls-port` and the certificates). The port is
   * picked with the plain one, both again on each attempt: a port picked ahead of the start may be taken
   * by then (another server of the same test picking its ports), and an attempt that kept it failed again.
   */
  tlsArgs?: (tlsPort: number) => string[];
}

const STARTUP_DEADLINE_MS = 10_000;
const STOP_DEADLINE_MS = 5_000;

export async function startRedis(options: StartRedisOptions = {}): Promise<RedisServer> {
  assertInstalled();
  const dir = mkdtempSync(join(tmpdir(), 'sundial-redis-'));
  const config = options.config === undefined ? [] : [join(dir, 'redis.conf')];
  if (options.config !== undefined) writeFileSync(config[0], options.config);
  // The port may be taken between release and bind by someone else; redis then exits and we retry.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const { tlsArgs } = options;
    const tlsPort = tlsArgs ? await freePort() : undefined;
    const args = [...(options.args ?? []), ...(tlsArgs && tlsPort ? tlsArgs(tlsPort) : [])];
    let child: ChildProcess;
    try {
      child = await launch(port, dir, config, args);
    } catch (error) {
      if (attempt < 3 && /Address already in use/.test((error as Error).message)) continue;
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    return {
      url: `redis://127.0.0.1:${port}`,
      port,
      tlsPort,
      dir,
      kill: () => child.kill('SIGKILL'),
      signal: (signal) => child.kill(signal),
      stop: () => stop(child, port, dir),
      async restart(downMs: number) {
        await stop(child, port, null);
        await new Promise((resolve) => setTimeout(resolve, downMs)); // the outage itself
        child = await launch(port, dir, config, args);
      },
    };
  }
}

/** Starts redis-server on `port` with its data in `dir` and waits for its PONG. */
async function launch(port: number, dir: string, config: string[], args: string[]): Promise<ChildProcess> {
  // Owned: killed (and its dir removed) if this process ends without stopping it.
  const child = spawnOwned(
    'redis-server',
    [
      ...config,
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
      '--maxmemory-policy',
      'noeviction',
      '--hz',
      '100',
      '--protected-mode',
      'no',
      ...args,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
    () => rmSync(dir, { recursive: true, force: true }),
  );
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  try {
    await waitForPing(port, child);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`redis-server did not start on port ${port}: ${(error as Error).message}\n${output}`, {
      cause: error,
    });
  }
  return child;
}

function assertInstalled(): void {
  const probe = spawnSync('redis-server', ['--version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) {
    throw new Error(
      'redis-server is not installed or not on PATH; tests need it (e.g. `apt-get install redis-server`).',
    );
  }
}

/** A port free on 127.0.0.1 right now (someone else may take it before it is bound). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Sends a raw inline command and resolves with the first reply line. */
function rawCommand(port: number, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    let reply = '';
    socket.setTimeout(1_000, () => socket.destroy(new Error('timeout')));
    socket.once('error', reject);
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.includes('\r\n')) {
        socket.end();
        resolve(reply.split('\r\n')[0]);
      }
    });
    socket.on('close', () => resolve(reply.split('\r\n')[0]));
    socket.connect(port, '127.0.0.1', () => socket.write(`${command}\r\n`));
  });
}

async function waitForPing(port: number, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + STARTUP_DEADLINE_MS;
  let lastError = 'no answer';
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`exited with code ${child.exitCode}`);
    try {
      // NOAUTH: up, with a password (Sentinels with `requirepass`, redis-sentinel.ts)
      if (/^(\+PONG|-NOAUTH)/.test(await rawCommand(port, 'PING'))) return;
    } catch (error) {
      lastError = (error as Error).message;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`no PONG within ${STARTUP_DEADLINE_MS} ms (${lastError})`);
}

/** Shuts the server down; removes its data dir unless `dir` is null (a restart follows). */
async function stop(child: ChildProcess, port: number, dir: string | null): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) {
    // 'close' (not 'exit') also waits for the output pipes, so no handle outlives the suite.
    const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const refused = await rawCommand(port, 'SHUTDOWN NOSAVE').then(
      (reply) => reply.startsWith('-NOAUTH'),
      () => false,
    );
    if (refused) child.kill('SIGTERM'); // a password: redis-server shuts down on SIGTERM as well
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_DEADLINE_MS);
    await exited;
    clearTimeout(timer);
  }
  if (dir !== null) rmSync(dir, { recursive: true, force: true });
}

/** Redis's clock (`TIME`), epoch ms: what due times and the apps' `Sundial-Now` are on. */
export async function redisNow(redis: Redis): Promise<number> {
  const [seconds, micros] = await redis.time();
  return Number(seconds) * 1000 + Math.floor(Number(micros) / 1000);
}
