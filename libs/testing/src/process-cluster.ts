import { join } from 'node:path';
import type { AppProcess } from './app-process';
import { killAll, spawnApp } from './app-process';
import { DIST } from './build';

/**
 * Environment of every app process in a cluster test: a fast reconciler, and the default lease (30 s).
 * A short lease would make a worker whose event loop stalls that long on a loaded machine look dead:
 * its run is claimed again (at-least-once) although no worker died. Suites that kill workers on
 * purpose give those workers `SHORT_LEASE` so their runs come back within seconds.
 */
export function clusterEnv(redisUrl: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    REDIS_URL: redisUrl,
    SUNDIAL_PARTITIONS: '2',
    SUNDIAL_RECONCILE_MS: '300',
    WORKER_CONCURRENCY: '20',
    SUNDIAL_HANDLERS_MODULE: join(DIST, 'libs', 'testing', 'src', 'recording-handlers.js'),
    // Runs are recorded in database 1 of the same private Redis (the cluster uses database 0).
    SUNDIAL_TEST_RECORD_URL: `${redisUrl}/1`,
    ...extra,
  };
}

/** For a worker the test kills: its runs are claimed again (or recorded lost) 1.5 s after it died. */
export const SHORT_LEASE = { SUNDIAL_LEASE_MS: '1500' };

/**
 * Starts `schedulers` scheduler and `workers` worker processes at once. When one fails to start, the
 * others are stopped before the failure is thrown: the suite, having no cluster, would not stop them,
 * and they ran on (serving the suite's Redis) until the jest worker ended.
 */
export async function spawnCluster(
  env: Record<string, string>,
  schedulers: number,
  workers: number,
): Promise<{ schedulers: AppProcess[]; workers: AppProcess[] }> {
  const settled = await Promise.allSettled([
    ...Array.from({ length: schedulers }, (_, n) => spawnApp('scheduler', `scheduler-${n}`, env)),
    ...Array.from({ length: workers }, (_, n) => spawnApp('worker', `worker-${n}`, env)),
  ]);
  const started = settled.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const failed = settled.find((result) => result.status === 'rejected');
  if (failed) {
    await killAll(started);
    throw failed.reason;
  }
  return { schedulers: started.slice(0, schedulers), workers: started.slice(schedulers) };
}
