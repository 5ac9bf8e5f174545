import { SundialKeys } from '@sundial/redis';
import { Redis } from 'ioredis';
import { keyPath, type RedisServer, redisNow, startRedis, waitFor } from '@sundial/testing/harness';
import { type RunningApp, startScheduler, startWorker } from '../local-cluster';

/** The value of one series in a Prometheus exposition, e.g. `sundial_runs_total{handler="a",status="ok"}`. */
function sample(exposition: string, series: string): number | undefined {
  const line = exposition.split('\n').find((text) => text.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** The sum of every series of `name` (all label values). */
function total(exposition: string, name: string): number {
  return exposition
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/** docs/spec.md §6.1 metrics, exported by the apps that do the work, over real Redis, BullMQ and HTTP. */
describe('Prometheus metrics of a running cluster', () => {
  let redis: RedisServer;
  let scheduler: RunningApp;
  let worker: RunningApp;

  beforeAll(async () => {
    redis = await startRedis();
    [scheduler, worker] = await Promise.all([
      startScheduler(redis.url),
      startWorker(redis.url, {
        'metrics-ok': async () => undefined,
        'metrics-boom': () => Promise.reject(new Error('boom')),
      }),
    ]);
  });

  afterAll(async () => {
    await Promise.all([worker?.close(), scheduler?.close()]);
    await redis?.stop();
  });

  async function scrape(app: RunningApp): Promise<string> {
    const reply = await app.api<string>('GET', '/metrics');
    expect(reply.status).toBe(200);
    return reply.body;
  }

  it('counts what was scheduled, cancelled, run and still pending', async () => {
    const specs = [
      { key: 'metrics:ok', handler: 'metrics-ok', delay: 20 },
      { key: 'metrics:boom', handler: 'metrics-boom', delay: 20 },
      { key: 'metrics:cancelled', handler: 'metrics-ok', delay: '1h' },
      { key: 'metrics:later', handler: 'metrics-ok', delay: '1h' },
      { key: 'metrics:every', handler: 'metrics-ok', every: '1h' },
    ];
    for (const spec of specs) expect((await scheduler.api('POST', '/v1/timers', spec)).status).toBe(201);
    expect((await scheduler.api('DELETE', keyPath('metrics:cancelled'))).status).toBe(200);

    const fromWorker = await waitFor(
      async () => {
        const exposition = await scrape(worker);
        return total(exposition, 'sundial_runs_total') >= 2 && exposition;
      },
      { what: 'both due timers to run' },
    );
    expect(sample(fromWorker, 'sundial_runs_total{handler="metrics-ok",status="ok"}')).toBe(1);
    expect(sample(fromWorker, 'sundial_runs_total{handler="metrics-boom",status="failed"}')).toBe(1);
    expect(total(fromWorker, 'sundial_runs_total')).toBe(2);
    expect(sample(fromWorker, 'sundial_fire_lateness_seconds_count')).toBe(2);
    expect(sample(fromWorker, 'sundial_run_duration_seconds_count{handler="metrics-ok"}')).toBe(1);
    expect(sample(fromWorker, 'sundial_run_duration_seconds_count{handler="metrics-boom"}')).toBe(1);
    expect(total(fromWorker, 'sundial_runs_stale_total')).toBe(0);

    const fromScheduler = await scrape(scheduler);
    expect(sample(fromScheduler, 'sundial_timers_scheduled_total{kind="once"}')).toBe(4);
    expect(sample(fromScheduler, 'sundial_timers_scheduled_total{kind="interval"}')).toBe(1);
    expect(sample(fromScheduler, 'sundial_timers_cancelled_total')).toBe(1);
    // Left waiting: metrics:later and metrics:every.
    expect(total(fromScheduler, 'sundial_timers_pending')).toBe(2);
    expect(sample(fromScheduler, 'sundial_reconciler_rearmed_total')).toBe(0);
    for (const state of ['waiting', 'active', 'delayed', 'completed', 'failed']) {
      expect(sample(fromScheduler, `sundial_queue_jobs{state="${state}"}`)).toEqual(expect.any(Number));
    }
    expect(fromScheduler).toContain('process_cpu_user_seconds_total');
    expect(sample(fromScheduler, 'sundial_redis_up')).toBe(1);
    expect(sample(fromScheduler, 'sundial_runs_lost_total')).toBe(0);
    expect(sample(fromScheduler, 'sundial_runs_requeued_total')).toBe(0);
  });

  it('counts as overdue only timers more than a second past their due or hand-off', async () => {
    const keys = new SundialKeys();
    const direct = new Redis(redis.url);
    try {
      const now = await redisNow(direct);
      // Index entries written by hand (no rows), out of the dispatcher's reach (due in a minute) and
      // inside the reconciler's 2 s grace for an armed entry whose job is missing.
      await direct.zadd(keys.due(0), now + 60_000, 'overdue:later');
      await direct.zadd(keys.armed(0), now - 1_500, 'overdue:armed', now, 'overdue:just-armed');
      const exposition = await scrape(scheduler);
      expect(sample(exposition, 'sundial_timers_overdue{partition="0"}')).toBe(1);
    } finally {
      await direct.zrem(keys.due(0), 'overdue:later');
      await direct.zrem(keys.armed(0), 'overdue:armed', 'overdue:just-armed');
      direct.disconnect();
    }
  });
});
