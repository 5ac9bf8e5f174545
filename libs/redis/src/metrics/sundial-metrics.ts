import { Counter, Gauge, type Metric, register, type Registry } from 'prom-client';
import type { SundialObserver, SundialObserverEvents } from './observer';
import { RunCounter } from './run-counter';
import { RunHistogram } from './run-histogram';
import { withinScrape } from './within-scrape';

export { SCRAPE_READ_MS } from './within-scrape';

type Events = SundialObserverEvents;
type Registered = Metric | RunCounter | RunHistogram<string>;

/** What a scheduler reads on each scrape; each answers label value → count. */
export interface BacklogSource {
  /** partition → timers waiting to fire (due + armed) */
  pending(): Promise<Record<string, number>>;
  /** BullMQ state → fire jobs, over every partition queue */
  queueJobs(): Promise<Record<string, number>>;
  /** partition → timers past their due (or hand-off) by more than a second and not yet claimed */
  overdue(): Promise<Record<string, number>>;
  /** partition → keys a cancelAll's scope record covers that its sweep has not cancelled yet */
  unswept?(): Promise<Record<string, number>>;
  /** resolves when Redis answers */
  ping(): Promise<void>;
  /**
   * the key prefix read (a Backlog's): sources of one prefix read the same data, so one reading counts;
   * those of different prefixes (installations sharing a process and a registry) add up
   */
  readonly prefix?: string;
}

/** Lateness is ms when healthy and seconds when a backlog builds up (docs/spec.md §6.1). */
const LATENESS_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const DURATION_BUCKETS = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300];

/** The backlog sources of each registry, so that one gauge serves every app sharing the process. */
const backlogSources = new WeakMap<Registry, Set<BacklogSource>>();
/** Per registry, the runners taking each partition's fire jobs: one closing leaves another's 1 standing. */
const consumingRunners = new WeakMap<Registry, Map<string, number>>();

/**
 * The Prometheus metrics of docs/spec.md §6.1 on one registry (prom-client's global one by default). Several
 * apps may share a process (tests): a metric already registered under the same name is reused.
 * It is the observer RedisTimers, TimerRunner and Reconciler accept: every event of SundialObserverEvents.
 */
export class SundialMetrics implements Required<SundialObserver> {
  private readonly timersScheduled: Counter<'kind'>;
  private readonly timersCancelled: Counter;
  private readonly runs: RunCounter;
  private readonly runsStale: Counter<'reason' | 'phase'>;
  private readonly runsSkipped: Counter<'reason'>;
  private readonly lateness: RunHistogram;
  private readonly runDuration: RunHistogram<'handler'>;
  private readonly rearmed: Counter;
  private readonly requeued: Counter;
  private readonly lost: Counter;
  private readonly consumersRecreated: Counter<'partition'>;
  private readonly consumers: Gauge<'partition'>;
  private readonly dataLosses: Counter;
  private readonly writesLosses: Counter;
  private readonly sources: Set<BacklogSource>;
  private readonly runners: Map<string, number>;

  constructor(private readonly registry: Registry = register) {
    const registers = [registry];
    this.timersScheduled = this.metric(
      'sundial_timers_scheduled_total',
      (name) => new Counter({ name, help: 'Timers scheduled, by kind', labelNames: ['kind'], registers }),
    );
    this.timersCancelled = this.metric(
      'sundial_timers_cancelled_total',
      (name) => new Counter({ name, help: 'Timers cancelled', registers }),
    );
    // The counter and the two histograms each run adds to are Sundial's own (run-counter.ts, run-histogram.ts):
    // prom-client's cost a worker about 1 µs and 800 B per fired timer.
    this.runs = this.metric('sundial_runs_total', (name) =>
      this.registered(
        new RunCounter(name, 'Handler runs finished, by handler and status (ok, failed, stale)'),
      ),
    );
    this.runsStale = this.metric(
      'sundial_runs_stale_total',
      (name) =>
        new Counter({
          name,
          help:
            'Runs found stale (timer gone, changed, or not in the expected state), by reason and phase: ' +
            'claim (never ran) or complete (ran; its outcome was dropped)',
          labelNames: ['reason', 'phase'],
          registers,
        }),
    );
    this.runsSkipped = this.metric(
      'sundial_runs_skipped_total',
      (name) =>
        new Counter({
          name,
          help: 'Periodic slots gone past without a run, by reason: missed (before the run started), overlap (during it)',
          labelNames: ['reason'],
          registers,
        }),
    );
    this.lateness = this.metric('sundial_fire_lateness_seconds', (name) =>
      this.registered(new RunHistogram(name, 'Run start minus due, by the Redis clock', LATENESS_BUCKETS)),
    );
    this.runDuration = this.metric('sundial_run_duration_seconds', (name) =>
      this.registered(new RunHistogram(name, 'Handler run time, by handler', DURATION_BUCKETS, 'handler')),
    );
    this.rearmed = this.metric(
      'sundial_reconciler_rearmed_total',
      (name) =>
        new Counter({
          name,
          help: 'Armed timers whose fire job had vanished, armed again by the reconciler',
          registers,
        }),
    );
    this.requeued = this.metric(
      'sundial_runs_requeued_total',
      (name) =>
        new Counter({
          name,
          help: 'At-least-once runs whose worker was lost (lease expired), queued to run again',
          registers,
        }),
    );
    this.lost = this.metric(
      'sundial_runs_lost_total',
      (name) =>
        new Counter({
          name,
          help: "At-most-once runs whose worker was lost (lease expired), recorded failed with reason 'lost'",
          registers,
        }),
    );
    this.consumersRecreated = this.metric(
      'sundial_fire_consumers_recreated_total',
      (name) =>
        new Counter({
          name,
          help: 'Fire-job consumers that had stopped taking jobs, closed and made anew, by partition',
          labelNames: ['partition'],
          registers,
        }),
    );
    // Fed by workers only (a TimerRunner at start and close): what the alert SundialNoReadyWorker counts,
    // whatever job the process is scraped under (the stock worker, or an app with SundialWorkerModule).
    this.consumers = this.metric(
      'sundial_fire_consumers',
      (name) =>
        new Gauge({
          name,
          help: 'Whether this process takes the fire jobs of the partition (1) or no longer (0), by partition',
          labelNames: ['partition'],
          registers,
        }),
    );
    this.dataLosses = this.metric(
      'sundial_redis_data_lost_total',
      (name) =>
        new Counter({
          name,
          help: "Times this process found that Redis had lost Sundial's data it had seen (every timer gone)",
          registers,
        }),
    );
    this.writesLosses = this.metric(
      'sundial_redis_writes_lost_total',
      (name) =>
        new Counter({
          name,
          help: 'Failovers this process found had lost writes it saw acknowledged (a promoted replica lagged)',
          registers,
        }),
    );
    this.sources = backlogSources.get(registry) ?? new Set();
    backlogSources.set(registry, this.sources);
    this.runners = consumingRunners.get(registry) ?? new Map();
    consumingRunners.set(registry, this.runners);
    this.backlogGauge(
      'sundial_timers_pending',
      'Timers waiting to fire (due + armed), by partition',
      'partition',
      (source) => source.pending(),
    );
    this.backlogGauge('sundial_queue_jobs', 'Fire jobs in the BullMQ queues, by state', 'state', (source) =>
      source.queueJobs(),
    );
    this.backlogGauge(
      'sundial_timers_overdue',
      'Timers more than 1 s past their due (or their hand-off) and not yet claimed, by partition',
      'partition',
      (source) => source.overdue(),
    );
    this.backlogGauge(
      'sundial_cancel_all_unswept',
      "Keys a cancelAll's scope record covers (answered as cancelled) that its sweep has not cancelled yet, by partition",
      'partition',
      (source) => source.unswept?.() ?? Promise.resolve({}),
    );
  }

  scheduled({ kind }: Events['scheduled']): void {
    this.timersScheduled.inc({ kind });
  }

  cancelled({ count }: Events['cancelled']): void {
    this.timersCancelled.inc(count);
  }

  runFinished(run: Events['runFinished']): void {
    this.runs.inc(run.handler, run.status);
    this.runUnanswered(run);
  }

  /** Timed as any run; not in `sundial_runs_total`, which counts what completions recorded (§6.1). */
  runUnanswered(run: Events['runUnanswered']): void {
    this.lateness.observe(run.latenessMs / 1000);
    this.runDuration.observe(run.durationMs / 1000, run.handler);
  }

  stale({ reason, phase }: Events['stale']): void {
    this.runsStale.inc({ reason, phase });
  }

  skipped({ reason, count }: Events['skipped']): void {
    this.runsSkipped.inc({ reason }, count);
  }

  reconciled(counts: Events['reconciled']): void {
    this.rearmed.inc(counts.rearmed);
    this.requeued.inc(counts.requeued);
    this.lost.inc(counts.lost);
  }

  workerLost({ outcome }: Events['workerLost']): void {
    (outcome === 'lost' ? this.lost : this.requeued).inc();
  }

  consumerRecreated({ partition }: Events['consumerRecreated']): void {
    this.consumersRecreated.inc({ partition: String(partition) });
  }

  /** 1 while any runner of the process takes the partition's jobs (two installations, or two runners, in one). */
  consuming({ partitions, on }: Events['consuming']): void {
    for (const partition of partitions.map(String)) {
      const runners = Math.max(0, (this.runners.get(partition) ?? 0) + (on ? 1 : -1));
      this.runners.set(partition, runners);
      this.consumers.set({ partition }, runners > 0 ? 1 : 0);
    }
  }

  /** The apps' layout watch (serve.ts) found that Redis lost the data this process had seen. */
  dataLost(): void {
    this.dataLosses.inc();
  }

  /** The apps' layout watch found that a failover lost writes this process had seen (replication-history.ts). */
  writesLost(): void {
    this.writesLosses.inc();
  }

  /** Reads `source` on every scrape until the returned function is called (a scheduler's lifetime). */
  trackBacklog(source: BacklogSource): () => void {
    this.sources.add(source);
    this.redisUpGauge();
    return () => {
      if (this.sources.delete(source) && this.sources.size === 0)
        this.registry.removeSingleMetric('sundial_redis_up');
    };
  }

  /** The metric registered under `name`, made by `make` unless the registry holds one already. */
  private metric<T extends Registered>(name: string, make: (name: string) => T): T {
    return (this.registry.getSingleMetric(name) as T | undefined) ?? make(name);
  }

  /** One of Sundial's own metrics, on the registry: it takes any that answers get() and reset() as prom-client's do. */
  private registered<T extends RunCounter | RunHistogram<string>>(metric: T): T {
    this.registry.registerMetric(metric as unknown as Metric);
    return metric;
  }

  /**
   * `sundial_redis_up`: 1 when every backlog source's Redis answers at scrape time. Registered by the
   * first tracked source and removed with the last (trackBacklog), so only running schedulers export it:
   * a worker's 0, or that of a dispatcher stopped in an app that goes on, would read as Redis down.
   */
  private redisUpGauge(): void {
    const sources = this.sources;
    this.metric(
      'sundial_redis_up',
      (name) =>
        new Gauge({
          name,
          help: 'Whether Redis answered PING at scrape time (1) or not (0), as the scheduler sees it',
          registers: [this.registry],
          async collect() {
            const answers = await Promise.all(
              [...sources].map((source) =>
                withinScrape(source.ping()).then(
                  () => true,
                  () => false,
                ),
              ),
            );
            this.set(answers.length > 0 && answers.every(Boolean) ? 1 : 0);
          },
        }),
    );
  }

  /** A gauge set on every scrape from what `read` takes from each backlog source. */
  private backlogGauge<L extends string>(
    name: string,
    help: string,
    label: L,
    read: (source: BacklogSource) => Promise<Record<string, number>>,
  ): void {
    const sources = this.sources;
    this.metric(
      name,
      () =>
        new Gauge({
          name,
          help,
          labelNames: [label],
          registers: [this.registry],
          async collect() {
            this.reset();
            // Each prefix's first answer counts once; several prefixes add up, so one installation's
            // backlog is never written over by another's reading of the same partition or state.
            const totals = new Map<string, number>();
            const counted = new Set<string>();
            for (const source of sources) {
              if (counted.has(source.prefix ?? '')) continue;
              // Redis down or frozen: the scrape still answers, without this reading.
              const reading = await withinScrape(read(source)).catch(() => null);
              if (!reading) continue;
              counted.add(source.prefix ?? '');
              for (const [value, count] of Object.entries(reading))
                totals.set(value, (totals.get(value) ?? 0) + count);
            }
            for (const [value, count] of totals)
              this.set({ [label]: value } as Partial<Record<L, string>>, count);
          },
        }),
    );
  }
}
