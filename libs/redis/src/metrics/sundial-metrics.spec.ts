import { Registry } from 'prom-client';
import { type BacklogSource, SundialMetrics } from './sundial-metrics';

async function series(registry: Registry): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((line) => line !== '' && !line.startsWith('#'));
}

describe('SundialMetrics', () => {
  it('records what its observers are told, on the registry it is given', async () => {
    const registry = new Registry();
    const metrics = new SundialMetrics(registry);
    metrics.scheduled({ kind: 'cron' });
    metrics.cancelled({ count: 3 });
    metrics.runFinished({ handler: 'mail', status: 'failed', latenessMs: 20, durationMs: 1500 });
    metrics.stale({ reason: 'version', phase: 'claim' });
    metrics.stale({ reason: 'status', phase: 'complete' });
    metrics.skipped({ reason: 'overlap', count: 4 });
    metrics.skipped({ reason: 'missed', count: 6 });
    metrics.reconciled({ rearmed: 2, requeued: 1, lost: 5 });

    expect(await series(registry)).toEqual(
      expect.arrayContaining([
        'sundial_timers_scheduled_total{kind="cron"} 1',
        'sundial_timers_cancelled_total 3',
        'sundial_runs_total{handler="mail",status="failed"} 1',
        'sundial_runs_stale_total{reason="version",phase="claim"} 1',
        'sundial_runs_stale_total{reason="status",phase="complete"} 1',
        'sundial_runs_skipped_total{reason="overlap"} 4',
        'sundial_runs_skipped_total{reason="missed"} 6',
        'sundial_reconciler_rearmed_total 2',
        'sundial_runs_requeued_total 1',
        'sundial_runs_lost_total 5',
        'sundial_fire_lateness_seconds_bucket{le="0.01"} 0',
        'sundial_fire_lateness_seconds_bucket{le="0.025"} 1',
        'sundial_run_duration_seconds_sum{handler="mail"} 1.5',
      ]),
    );
  });

  it('exports sundial_fire_consumers only where a runner consumes: 1 per partition from its start, 0 after its close', async () => {
    const registry = new Registry();
    const metrics = new SundialMetrics(registry);
    expect((await series(registry)).filter((line) => line.startsWith('sundial_fire_consumers'))).toEqual([]);
    metrics.consuming({ partitions: [0, 2], on: true });
    expect(await series(registry)).toEqual(
      expect.arrayContaining([
        'sundial_fire_consumers{partition="0"} 1',
        'sundial_fire_consumers{partition="2"} 1',
      ]),
    );
    metrics.consuming({ partitions: [0, 2], on: false });
    expect(await series(registry)).toEqual(
      expect.arrayContaining([
        'sundial_fire_consumers{partition="0"} 0',
        'sundial_fire_consumers{partition="2"} 0',
      ]),
    );
  });

  it('keeps a partition’s sundial_fire_consumers at 1 while another runner of the process still consumes it', async () => {
    // Two installations (or two runners) in one process: b's close used to set a's partitions 0 and 1 to 0.
    const registry = new Registry();
    const [a, b] = [new SundialMetrics(registry), new SundialMetrics(registry)];
    a.consuming({ partitions: [0, 1], on: true });
    b.consuming({ partitions: [0, 1, 2], on: true });
    b.consuming({ partitions: [0, 1, 2], on: false });
    const consumers = async () =>
      (await series(registry)).filter((line) => line.startsWith('sundial_fire_consumers{'));
    expect(await consumers()).toEqual([
      'sundial_fire_consumers{partition="0"} 1',
      'sundial_fire_consumers{partition="1"} 1',
      'sundial_fire_consumers{partition="2"} 0',
    ]);
    a.consuming({ partitions: [0, 1], on: false });
    expect(await consumers()).toEqual([
      'sundial_fire_consumers{partition="0"} 0',
      'sundial_fire_consumers{partition="1"} 0',
      'sundial_fire_consumers{partition="2"} 0',
    ]);
  });

  it('reuses the metrics already registered: a second instance adds to the same series', async () => {
    const registry = new Registry();
    new SundialMetrics(registry).cancelled({ count: 1 });
    new SundialMetrics(registry).cancelled({ count: 1 });
    expect(await series(registry)).toContain('sundial_timers_cancelled_total 2');
  });

  it('reads the backlog gauges on scrape, from tracked sources only, and skips a failing one', async () => {
    const registry = new Registry();
    const metrics = new SundialMetrics(registry);
    const source: BacklogSource = {
      pending: () => Promise.resolve({ 0: 5, 1: 0 }),
      queueJobs: () => Promise.resolve({ waiting: 2, active: 1 }),
      overdue: () => Promise.resolve({ 0: 3, 1: 0 }),
      ping: () => Promise.resolve(),
    };
    const down: BacklogSource = {
      pending: () => Promise.reject(new Error('Redis down')),
      queueJobs: () => Promise.reject(new Error('Redis down')),
      overdue: () => Promise.reject(new Error('Redis down')),
      ping: () => Promise.reject(new Error('Redis down')),
    };
    const untrack = metrics.trackBacklog(source);
    new SundialMetrics(registry).trackBacklog(down);

    expect(await series(registry)).toEqual(
      expect.arrayContaining([
        'sundial_timers_pending{partition="0"} 5',
        'sundial_timers_pending{partition="1"} 0',
        'sundial_queue_jobs{state="waiting"} 2',
        'sundial_queue_jobs{state="active"} 1',
        'sundial_timers_overdue{partition="0"} 3',
        'sundial_timers_overdue{partition="1"} 0',
        // one of the two sources cannot reach its Redis
        'sundial_redis_up 0',
      ]),
    );
    untrack();
    const after = await series(registry);
    expect(
      after.filter((line) => /^sundial_(timers_pending|queue_jobs|timers_overdue)\{/.test(line)),
    ).toEqual([]);
  });

  it('adds up the backlogs of two prefixes sharing a registry, and reads one prefix once', async () => {
    // Two installations in one process: b's reading of partition 0 used to overwrite a's.
    const registry = new Registry();
    const backlog = (prefix: string, overdue: number): BacklogSource => ({
      prefix,
      pending: () => Promise.resolve({ 0: overdue + 1 }),
      queueJobs: () => Promise.resolve({ waiting: overdue }),
      overdue: () => Promise.resolve({ 0: overdue }),
      ping: () => Promise.resolve(),
    });
    for (const source of [backlog('a', 7), backlog('a', 7), backlog('b', 0), backlog('c', 2)])
      new SundialMetrics(registry).trackBacklog(source);
    expect(await series(registry)).toEqual(
      expect.arrayContaining([
        'sundial_timers_overdue{partition="0"} 9',
        'sundial_timers_pending{partition="0"} 12',
        'sundial_queue_jobs{state="waiting"} 9',
      ]),
    );
  });

  // A dispatcher stopped in a process that goes on (SundialWorker.stop() in an app with `dispatch: true`)
  // is no scheduler any more: it exported `sundial_redis_up 0` with Redis up, which SundialRedisDown reads
  // as Redis unreachable when no other scheduler reports.
  it('exports sundial_redis_up while a backlog source is tracked, 1 while its Redis answers, none after', async () => {
    const registry = new Registry();
    const metrics = new SundialMetrics(registry);
    const exported = async () =>
      (await series(registry)).filter((line) => line.startsWith('sundial_redis_up'));
    expect(await exported()).toEqual([]);
    const source = {
      pending: () => Promise.resolve({}),
      queueJobs: () => Promise.resolve({}),
      overdue: () => Promise.resolve({}),
      ping: () => Promise.resolve(),
    };
    const untrack = metrics.trackBacklog(source);
    const untrackOther = new SundialMetrics(registry).trackBacklog({ ...source });
    expect(await exported()).toEqual(['sundial_redis_up 1']);
    untrack();
    expect(await exported()).toEqual(['sundial_redis_up 1']);
    untrackOther();
    expect(await exported()).toEqual([]);
    metrics.trackBacklog(source);
    expect(await exported()).toEqual(['sundial_redis_up 1']);
  });

  it('answers the scrape while Redis is frozen: sundial_redis_up 0, the backlog gauges left out', async () => {
    const registry = new Registry();
    const never = () => new Promise<never>(() => undefined);
    new SundialMetrics(registry).trackBacklog({
      pending: never,
      queueJobs: never,
      overdue: never,
      ping: never,
    });
    const scraped = await series(registry);
    expect(scraped).toContain('sundial_redis_up 0');
    expect(
      scraped.filter((line) => /^sundial_(timers_pending|queue_jobs|timers_overdue)\{/.test(line)),
    ).toEqual([]);
  });
});
