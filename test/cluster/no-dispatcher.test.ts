import { RedisTimers } from '@sundial/redis';
import type { AppProcess } from '@sundial/testing/harness';
import { clusterEnv, readRuns, spawnApp, waitFor } from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { appLines, useAppsOnPrivateRedis } from './app-fixture';

const NONE = 'No Sundial dispatcher has run for';
const SOME = 'No Sundial dispatcher serves partitions';
const AGAIN = 'A Sundial dispatcher runs again for';
/** A deadline for a line or a run: the worker's grace (at most 8 s here) and its looks, with room on a busy host. */
const NOTICE_MS = 35_000;
/**
 * The workers' grace here (SUNDIAL_DISPATCHER_GRACE_MS; the default, 15 s, is DEFAULT_DISPATCHER_GRACE_MS's
 * and worker-config's to hold): what the cases assert does not depend on its length, only their time does.
 * A worker started alone: short. One started together with a scheduler: above the scheduler's boot on a
 * loaded host, so that nothing is said.
 */
const ALONE_GRACE_MS = 1_000;
const GRACE_MS = 8_000;

const presenceLines = (app: AppProcess) => appLines(app, NONE, SOME, AGAIN);

/**
 * docs/spec.md §4.2, the standalone apps: a worker deployed without a scheduler (or with the scheduler
 * scaled to 0) says so once, its grace after its start, with the fix; a scheduler started then is said too.
 * The cases run side by side (`it.concurrent`), each on a prefix of its own: they wait on real time (the
 * worker's grace, a timer due past it). The restart case rolls the scheduler as
 * deploy/k8s does (maxSurge 1, maxUnavailable 0: the new one ready, then the old one stopped): stopped
 * first, the new one had to be up within the old one's last announcement (15 s, less up to 3 s), and its
 * boot alone took 10.9 and 12.2 s at load 11–13, so the worker warned, as it should after such a gap. A gap within
 * the announcement is test/redis/dispatcher-presence.test.ts's, where a dispatcher starts in milliseconds.
 */
describe('cluster: a worker with no scheduler says so (docs/spec.md §4.2)', () => {
  const { redis, apps } = useAppsOnPrivateRedis();

  it.concurrent(
    'one warn naming the prefix and the fix; a scheduler started later: one info line',
    async () => {
      const env = clusterEnv(redis().url);
      const worker = await spawnApp('worker', 'worker', {
        ...env,
        SUNDIAL_DISPATCHER_GRACE_MS: String(ALONE_GRACE_MS),
      });
      apps.push(worker);
      const [warn] = await waitFor(() => presenceLines(worker).length > 0 && presenceLines(worker), {
        timeoutMs: NOTICE_MS, // deadline
        what: 'the warn line',
      });
      expect(warn).toMatchObject({
        level: 'warn',
        prefix: 'sundial',
        fix: expect.stringMatching(/^Deploy the scheduler .*SUNDIAL_PREFIX=sundial, or .*dispatch: true/),
      });
      // the worker stays healthy: restarting it would not help
      expect((await worker.api('GET', '/health/ready')).status).toBe(200);

      apps.push(await spawnApp('scheduler', 'scheduler', env));
      await waitFor(() => presenceLines(worker).length > 1, { timeoutMs: NOTICE_MS, what: 'the info line' }); // deadline
      expect(presenceLines(worker).map((line) => line.level)).toEqual(['warn', 'info']);
    },
    120_000,
  );

  it.concurrent(
    'a scheduler serving partition 0 of 2: the worker (SUNDIAL_DISPATCHER_GRACE_MS) names partition 1 and the serve setting',
    async () => {
      const env = clusterEnv(redis().url, { SUNDIAL_PREFIX: 'subset' });
      apps.push(await spawnApp('scheduler', 'scheduler-0', { ...env, SUNDIAL_SERVE_PARTITIONS: '0' }));
      const worker = await spawnApp('worker', 'worker', { ...env, SUNDIAL_DISPATCHER_GRACE_MS: '600' });
      apps.push(worker);
      // waitFor's 10 s deadline: with the default grace (15 s) it would pass with nothing said.
      const [warn] = await waitFor(() => presenceLines(worker).length > 0 && presenceLines(worker), {
        what: 'the warn line',
      });
      expect(warn).toMatchObject({
        level: 'warn',
        msg: expect.stringContaining("partitions 1 (of 2) of prefix 'subset'"),
        partitions: [1],
        fix: expect.stringMatching(
          /^Have a dispatcher serve partitions 1: .*SUNDIAL_SERVE_PARTITIONS .*dispatch: true, serve/,
        ),
      });
    },
    60_000,
  );

  it.concurrent(
    'a cluster started together, its scheduler restarted: the timer runs and the worker says nothing past its grace',
    async () => {
      const env = clusterEnv(redis().url, { SUNDIAL_PREFIX: 'together' });
      const [scheduler, worker] = await Promise.all([
        spawnApp('scheduler', 'scheduler-1', env),
        spawnApp('worker', 'worker-1', { ...env, SUNDIAL_DISPATCHER_GRACE_MS: String(GRACE_MS) }),
      ]);
      apps.push(scheduler, worker);
      const timers = new RedisTimers({ connection: redis().url, prefix: 'together', partitions: 2 });
      const records = new Redis(`${redis().url}/1`);
      try {
        // Due past the worker's grace and a few of its looks (a third of it apart).
        await timers.schedule({ key: 'past-grace', handler: 'record', delay: GRACE_MS + 6_000 });
        // A rolling restart (deploy/k8s/base/scheduler.yaml's order): a new scheduler ready, the old one stops.
        apps.push(await spawnApp('scheduler', 'scheduler-2', env));
        scheduler.kill('SIGTERM');
        await scheduler.exited;
        await waitFor(async () => (await readRuns(records)).some((run) => run.key === 'past-grace'), {
          timeoutMs: NOTICE_MS, // deadline
          what: 'the timer to run',
        });
        expect(presenceLines(worker)).toEqual([]);
      } finally {
        records.disconnect();
        await timers.dispose();
      }
    },
    120_000,
  );
});
