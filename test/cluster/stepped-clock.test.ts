import { clusterEnv, faketimeEnv, hasFaketime, readRuns, spawnApp, waitFor } from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { useAppsOnPrivateRedis } from './app-fixture';

/** One line of a Prometheus exposition, e.g. `sundial_fire_lateness_seconds_sum`. */
function sample(exposition: string, series: string): number {
  const line = exposition.split('\n').find((text) => text.startsWith(`${series} `));
  return Number(line?.slice(series.length + 1));
}

/**
 * docs/spec.md §4.4: a node whose own clock is off does not move timers — also when that clock is stepped
 * while the process runs (NTP correcting a host that was 10 min behind). The scheduler and the worker run
 * under libfaketime reading their offset from a file: 10 min behind at start (the cluster clocks measure
 * it), then stepped right. Their monotonic clocks are left alone, as a real step leaves them. The
 * estimate was on Date.now(): the scheduler's client computed a cron's first occurrence and a preview
 * 10 min ahead, and the worker each run's lateness as 600 s and the cron's next slot from 10 min ahead,
 * recording 600 slots `skipped` (reason overlap).
 */
(hasFaketime() ? describe : describe.skip)('apps whose wall clock is stepped while they run', () => {
  const { redis, apps, raw } = useAppsOnPrivateRedis();
  const dir = mkdtempSync(join(tmpdir(), 'sundial-stepped-'));
  const offsetFile = join(dir, 'faketime');

  beforeAll(async () => {
    writeFileSync(offsetFile, '-600\n');
    const env = clusterEnv(redis().url, { SUNDIAL_PARTITIONS: '1', ...faketimeEnv({ file: offsetFile }) });
    apps.push(
      ...(await Promise.all([spawnApp('scheduler', 'scheduler', env), spawnApp('worker', 'worker', env)])),
    );
    writeFileSync(offsetFile, '+0\n'); // the step: both apps' wall clocks are right from here on
  }, 60_000);

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  async function redisNow(): Promise<number> {
    const [seconds, micros] = await raw().time();
    return Number(seconds) * 1000 + Number(micros) / 1000;
  }

  it('computes cron occurrences, runs, lateness and next slots on Redis time', async () => {
    const [scheduler, worker] = apps;
    const spec = { key: 'every-second', handler: 'record', cron: '* * * * * *', tz: 'Europe/Paris' };
    const preview = await scheduler.api<{ next: { at: string }[] }>('POST', '/v1/preview?count=1', spec);
    expect(Date.parse(preview.body.next[0].at) - (await redisNow())).toBeLessThanOrEqual(1_000);
    const created = await scheduler.api<{ dueAt: number }>('POST', '/v1/timers', spec);
    expect(created.status).toBe(201);
    expect(created.body.dueAt - (await redisNow())).toBeLessThanOrEqual(1_000);

    // database 1: the recording handler's runs (clusterEnv); closed here, before the fixture stops Redis
    const records = new Redis(`${redis().url}/1`);
    // deadline: left as soon as three runs started (one a second); a 10 min skip never gets there
    const runs = await waitFor(
      async () => {
        const started = await readRuns(records);
        return started.length >= 3 && started;
      },
      { timeoutMs: 8_000, what: 'three runs of the seconds cron' }, // deadline
    ).finally(() => records.disconnect());
    const dues = runs.slice(0, 3).map((run) => run.due);
    expect(dues).toEqual([dues[0], dues[0] + 1_000, dues[0] + 2_000]);
    // `at` is the worker's Date.now(), right again after the step (this host's clock is Redis's)
    expect(runs.filter((run) => run.at < run.due)).toEqual([]);
    const timer = await scheduler.api<{ dueAt: number }>('GET', '/v1/timers/every-second');
    expect(timer.body.dueAt - (await redisNow())).toBeLessThanOrEqual(1_000);
    const history = await scheduler.api<{ entries: { event: string }[] }>(
      'GET',
      '/v1/timers/every-second/history',
    );
    expect(history.body.entries.filter((entry) => entry.event === 'skipped')).toEqual([]);
    const metrics = (await worker.api<string>('GET', '/metrics')).body;
    const count = sample(metrics, 'sundial_fire_lateness_seconds_count');
    expect(count).toBeGreaterThanOrEqual(3);
    expect(sample(metrics, 'sundial_fire_lateness_seconds_sum') / count).toBeLessThan(0.5);
  });
});
