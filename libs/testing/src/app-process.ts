import type { ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { DIST } from './build';
import { type ChildEnd, childOutput } from './child-output';
import type { HttpClient } from './http-client';
import { httpClient } from './http-client';
import { spawnOwned } from './owned-child';
import { waitFor } from './wait-for';

/** A scheduler or worker running as a real child process from `dist` (see ensureBuilt). */
export interface AppProcess {
  name: string;
  pid: number;
  url: string;
  api: HttpClient;
  /** every line it wrote, stdout and stderr */
  lines: string[];
  /** the lines it wrote on stdout alone */
  stdout: string[];
  /** resolves when it exited and its output ended (`lines` is whole then) */
  exited: Promise<ChildEnd>;
  kill(signal: NodeJS.Signals): void;
}

/**
 * A liveness bound, not a measurement (deadline): the app's boot is CPU work, slow on a starved host. At
 * load 17-19 on 2 cores a scheduler took 13-22 s from spawn to its first log line; with three apps
 * booting side by side at load 20-30, 3 of 10 sentinel-failover runs failed here at 30 s, the scheduler
 * not yet listening (twice without a single line).
 */
const START_DEADLINE_MS = 60_000;

export interface SpawnAppOptions {
  /** another build's `dist` (an older release's, for test/upgrade) */
  dist?: string;
  /**
   * told each line as it comes, before the app is ready (spawnApp resolves only then): a test that must
   * act on what an app says while it starts (a Redis brought back once the app waits for it)
   */
  onLine?: (line: string) => void;
  /** how long it may take to listen, and again to be ready (60 s) */
  startDeadlineMs?: number;
}

/**
 * Spawns `node dist/apps/<app>/src/main.js` (an example or a fixture: `dist/<path>/src/main.js`) with PORT=0
 * and resolves once it is ready: it logged the port it listens on and /health/ready answers 200.
 */
export async function spawnApp(
  app: 'scheduler' | 'worker' | 'examples/reminders' | 'test/fixtures/fastify',
  name: string,
  env: Record<string, string>,
  { dist = DIST, onLine, startDeadlineMs = START_DEADLINE_MS }: SpawnAppOptions = {},
): Promise<AppProcess> {
  const entry = app.includes('/')
    ? join(dist, app, 'src', 'main.js')
    : join(dist, 'apps', app, 'src', 'main.js');
  // Owned: killed if this process ends first, so no app outlives its suite.
  const child = spawnOwned(process.execPath, [entry], {
    env: { ...process.env, LOG_LEVEL: 'info', ...env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let port: number | undefined;
  const {
    lines,
    stdout,
    ended: exited,
  } = childOutput(child, (line) => {
    port ??= listeningPort(line);
    onLine?.(line);
  });
  let ended: ChildEnd | undefined;
  void exited.then((end) => (ended = end));
  // An app that exits at start is reported once its output ended: its last lines say why.
  const started = await waitFor(() => port ?? (ended ? -1 : undefined), {
    timeoutMs: startDeadlineMs,
    what: `${name} to listen`,
  }).catch((error: Error) => {
    child.kill('SIGKILL');
    throw new Error(`${error.message}\n${lines.join('\n')}`);
  });
  if (started === -1) throw new Error(`${name} exited at start with ${ended?.code}:\n${lines.join('\n')}`);
  const url = `http://127.0.0.1:${started}`;
  const api = httpClient(url);
  await waitFor(async () => (await api('GET', '/health/ready')).status === 200, {
    timeoutMs: startDeadlineMs,
    what: `${name} to be ready`,
  }).catch((error: Error) => {
    // the caller gets no AppProcess to stop: an app left running would outlive its suite
    child.kill('SIGKILL');
    throw error;
  });
  return {
    name,
    pid: child.pid!,
    url,
    api,
    lines,
    stdout,
    exited,
    kill: (signal) => killChild(child, signal),
  };
}

/** The apps log `{ msg: '<app> listening', port }` (level info) once bound. */
function listeningPort(line: string): number | undefined {
  try {
    const record = JSON.parse(line) as { msg?: unknown; port?: unknown };
    return typeof record.msg === 'string' &&
      record.msg.endsWith('listening') &&
      typeof record.port === 'number'
      ? record.port
      : undefined;
  } catch {
    return undefined;
  }
}

function killChild(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
}

/** Stops every process still running (SIGKILL: the suite is over) and waits for them to exit. */
export async function killAll(apps: (AppProcess | undefined)[]): Promise<void> {
  for (const app of apps) app?.kill('SIGKILL');
  await Promise.all(apps.map((app) => app?.exited));
}

/**
 * Spawns an app that should refuse to start: resolves with why it exited (spawnApp's message, with its
 * output), or 'started' — then it is stopped at once — when it did start.
 */
export async function spawnRefused(
  app: Parameters<typeof spawnApp>[0],
  name: string,
  env: Record<string, string>,
): Promise<string> {
  const started = await spawnApp(app, name, env).catch((error: Error) => error);
  if (started instanceof Error) return started.message;
  await killAll([started]);
  return 'started';
}
