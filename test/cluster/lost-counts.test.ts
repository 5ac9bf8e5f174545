import { RedisTimers } from '@sundial/redis';
import * as testing from '@sundial/testing/harness';
import { type AppProcess, readRuns, SHORT_LEASE, spawnApp } from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { midRunSpecs, settledTimers } from './mid-run';

/** An unlabelled counter in a process's /metrics. */
async function scraped(app: AppProcess, name: string): Promise<number> {
  const reply = await app.api<string>('GET', '/metrics');
  expect(reply.status).toBe(200);
  const line = reply.body.split('\n').find((text) => text.startsWith(`${name} `));
  return line === undefined ? 0 : Number(line.slice(name.length + 1));
}

/** How many at-most-once runs a process logged it settled lost (`Sundial: <n> at-most-once run(s) lost …`). */
function loggedLost(app: AppProcess): number {
  let total = 0;
  for (const line of app.lines) {
    const match = /"msg":"Sundial: (\d+) at-most-once runs? lost with/.exec(line);
    if (match) total += Number(match[1]);
  }
  return total;
}

/**
 * docs/spec.md §3.8, §6.1: a worker SIGKILLed mid-run, its fire job redelivered by BullMQ's stalled check
 * and claimed by other workers. The scheduler's reconciler does not run in this test (a period of an
 * hour), so every run of the dead worker is settled by a claim: each at-most-once one recorded lost,
 * each at-least-once one taken over and run again. Before, those claims counted nothing
 * (sundial_runs_lost_total stayed 0 everywhere, so SundialRunsLost never fired); now the process whose
 * claim settled a run counts it, and the totals across processes equal the runs lost and re-run.
 */
describe('lost runs settled by the claim of a redelivered fire job are counted', () => {
  // the scheduler's reconciler runs once an hour: only claims settle the dead worker's runs
  const apps: AppProcess[] = [];
  const opened: { redis?: testing.RedisServer; client?: RedisTimers; records?: Redis } = {};
  let env: Record<string, string> = {};

  beforeAll(async () => {
    const [redis] = await Promise.all([testing.startRedis(), testing.ensureBuilt()]);
    opened.redis = redis;
    env = testing.clusterEnv(redis.url, { SUNDIAL_RECONCILE_MS: '3600000' });
    apps.push(await spawnApp('scheduler', 'scheduler', env));
  }, 180_000);

  afterAll(async () => {
    await opened.client?.dispose();
    opened.records?.disconnect();
    await testing.killAll(apps);
    await opened.redis?.stop();
  });

  async function startWorker(name: string): Promise<AppProcess> {
    // every worker with a short lease: its stalled check (every lease) hands the dead worker's job over soon
    const worker = await spawnApp('worker', name, { ...env, ...SHORT_LEASE });
    apps.push(worker);
    return worker;
  }

  it('on the process that settled each run, and in total across processes', async () => {
    const client = (opened.client = new RedisTimers({ connection: opened.redis!.url, partitions: 2 }));
    const records = (opened.records = new Redis(`${opened.redis!.url}/1`));
    const [scheduler] = apps;
    const doomed = await startWorker('doomed');
    const keys = (await client.scheduleMany(midRunSpecs('count:', 6))).map((timer) => timer.key);
    const runs = async () => (await readRuns(records)).filter((run) => run.key.startsWith('count:'));
    await testing.waitFor(async () => (await runs()).length === keys.length, { what: 'every run to start' });

    const survivors = await Promise.all([startWorker('survivor-a'), startWorker('survivor-b')]);
    doomed.kill('SIGKILL');
    expect((await doomed.exited).signal).toBe('SIGKILL');

    const timers = await settledTimers(client, keys);
    const lostRuns = timers.filter((t) => t.last?.error?.reason === 'lost').length;
    const reruns = (await runs()).filter((run) => run.event === 'started' && run.runCount === 2);
    expect([lostRuns, reruns.length]).toEqual([6, 6]);

    // each survivor counted what its claims settled: the lost runs it logged, the re-runs it ran
    for (const survivor of survivors) {
      expect({
        lost: await scraped(survivor, 'sundial_runs_lost_total'),
        requeued: await scraped(survivor, 'sundial_runs_requeued_total'),
      }).toEqual({
        lost: loggedLost(survivor),
        requeued: reruns.filter((run) => run.pid === survivor.pid).length,
      });
    }
    // the scheduler's reconciler settled none; the totals are the runs lost and run again
    const everyone = [scheduler, ...survivors];
    const total = async (name: string) =>
      (await Promise.all(everyone.map((app) => scraped(app, name)))).reduce((a, b) => a + b, 0);
    expect(await scraped(scheduler, 'sundial_runs_lost_total')).toBe(0);
    expect(await total('sundial_runs_lost_total')).toBe(lostRuns);
    expect(await total('sundial_runs_requeued_total')).toBe(reruns.length);
  }, 90_000);
});
