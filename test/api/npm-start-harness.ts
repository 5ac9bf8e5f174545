import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { join } from 'node:path';
import { childOutput, DIST, freePort, httpClient, spawnOwned, waitFor } from '@sundial/testing/harness';

/** What the `npm start` suites share: dist/scripts/start.js started, and its apps awaited. */

/** dist/scripts/start.js with the scheduler on `port` and the worker on `workerPort`. */
export function spawnStart(
  env: NodeJS.ProcessEnv,
  port: number,
  workerPort: number,
  options: Omit<SpawnOptions, 'env'>,
): ChildProcess {
  return spawnOwned(process.execPath, [join(DIST, 'scripts/start.js')], {
    ...options,
    env: { ...process.env, ...env, PORT: String(port), WORKER_PORT: String(workerPort) },
  });
}

/** Waits for each app on `ports` to answer /health/ready. */
export async function bothReady(...ports: number[]): Promise<void> {
  for (const port of ports) {
    const api = httpClient(`http://127.0.0.1:${port}`);
    await waitFor(async () => (await api('GET', '/health/ready').catch(() => undefined))?.status === 200, {
      timeoutMs: 60_000,
      intervalMs: 250,
      what: `the app on port ${port} to be ready`,
    });
  }
}

/** The pid of the process a line of start.js's output comes from: the redis-server's, or an app's. */
export function pidOfLine(line: string): number | undefined {
  const pid =
    /^\[redis\] (\d+):/.exec(line)?.[1] ?? /^\[(?:scheduler|worker)\] .*"pid":(\d+)/.exec(line)?.[1];
  return pid === undefined ? undefined : Number(pid);
}

/** npm start's own redis-server, left running by an `npm start` killed with SIGKILL. */
export interface LeftRedis {
  pid: number;
  url: string;
  /** SIGKILL, as a crash would: its pidfile stays behind. */
  kill(): void;
}

/**
 * `npm start` without REDIS_URL in `cwd`, its own redis-server on `redisPort`, killed with SIGKILL once
 * both apps are ready (its apps then ended too): its redis-server goes on running, as it does after a
 * `kill -9` of npm start.
 */
export async function leaveOwnRedisRunning(cwd: string, redisPort: number): Promise<LeftRedis> {
  const [port, workerPort] = [await freePort(), await freePort()];
  const start = spawnStart(
    { REDIS_URL: undefined, SUNDIAL_START_REDIS_PORT: String(redisPort) },
    port,
    workerPort,
    {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const apps = new Set<number>();
  let redis: number | undefined;
  const output = childOutput(start, (line) => {
    const pid = pidOfLine(line);
    if (pid === undefined) return;
    if (line.startsWith('[redis] ')) redis ??= pid;
    else apps.add(pid);
  });
  try {
    await bothReady(port, workerPort);
  } finally {
    start.kill('SIGKILL');
    await output.ended;
    for (const pid of apps) process.kill(pid, 'SIGKILL');
  }
  await waitFor(() => ![...apps].some(running), { timeoutMs: 5_000, what: 'the apps to end' }); // deadline
  const pid = redis!;
  return {
    pid,
    url: `redis://127.0.0.1:${redisPort}`,
    kill: () => running(pid) && process.kill(pid, 'SIGKILL'),
  };
}

/** Whether process `pid` exists. */
export function running(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
