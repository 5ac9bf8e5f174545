import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { join } from 'node:path';
import { DIST, httpClient, spawnOwned, waitFor } from '@sundial/testing';

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
