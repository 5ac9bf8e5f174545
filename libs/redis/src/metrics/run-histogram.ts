import type { Histogram } from 'prom-client';

/** What prom-client's Histogram hands its registry (`get()`), which this hands it too. */
type Exported = Awaited<ReturnType<Histogram['get']>>;
type ExportedValue = Exported['values'][number] & { sharedLabels?: Record<string, string> };

/** One label value's observations: a count per bucket (not cumulative, the last one +Inf), sum and count. */
interface Tally {
  counts: number[];
  sum: number;
  count: number;
}

/**
 * A Prometheus histogram with at most one label, for the two a fired timer observes (lateness, run
 * duration). prom-client's `Histogram.observe` hashes and validates the labels and makes a closure
 * and two objects on every call: 0.2–0.4 µs and ~100 B per observation, a few per cent of a worker's
 * CPU per timer (docs/design.md "Node CPU per fired timer"). This adds to an array instead, and hands
 * the registry exactly the values prom-client's Histogram would (`get`, `getForPromString`): the same
 * series, labels and order on /metrics, in JSON and through AggregatorRegistry.
 */
export class RunHistogram<L extends string = never> {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly tallies = new Map<string, Tally>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly buckets: readonly number[],
    /** the one label, or none */
    private readonly label?: L,
  ) {
    // prom-client exports a histogram without labels at zero from the start (but not after a reset).
    if (label === undefined) this.tallies.set('', this.emptyTally());
  }

  /** One observation, of the label value `labelValue` (ignored without a label). */
  observe(value: number, labelValue = ''): void {
    let tally = this.tallies.get(labelValue);
    if (!tally) {
      tally = this.emptyTally();
      this.tallies.set(labelValue, tally);
    }
    let bucket = 0;
    while (bucket < this.buckets.length && value > this.buckets[bucket]) bucket++;
    tally.counts[bucket]++;
    tally.sum += value;
    tally.count++;
  }

  /** Forgets every observation (`Registry.resetMetrics()`). */
  reset(): void {
    this.tallies.clear();
  }

  /** As prom-client's Histogram `get()`: each series' labels in one object. */
  async get(): Promise<Exported> {
    const exported = await this.getForPromString();
    const values = exported.values.map(({ sharedLabels, ...value }: ExportedValue) => ({
      ...value,
      labels: { ...value.labels, ...sharedLabels },
    }));
    return { ...exported, values };
  }

  /** As prom-client's Histogram: the bucket bound in `labels`, the histogram's labels in `sharedLabels`. */
  getForPromString(): Promise<Exported> {
    const values: ExportedValue[] = [];
    for (const [labelValue, tally] of this.tallies) {
      const sharedLabels: Record<string, string> =
        this.label === undefined ? {} : { [this.label]: labelValue };
      let cumulative = 0;
      this.buckets.forEach((bound, i) => {
        cumulative += tally.counts[i];
        values.push(this.value(`${this.name}_bucket`, { le: bound }, cumulative, sharedLabels, null));
      });
      values.push(this.value(`${this.name}_bucket`, { le: '+Inf' }, tally.count, sharedLabels, null));
      values.push(this.value(`${this.name}_sum`, {}, tally.sum, sharedLabels, undefined));
      values.push(this.value(`${this.name}_count`, {}, tally.count, sharedLabels, undefined));
    }
    return Promise.resolve({
      name: this.name,
      help: this.help,
      type: this.type,
      values,
      aggregator: this.aggregator,
    } as unknown as Exported);
  }

  private value(
    metricName: string,
    labels: Record<string, string | number>,
    value: number,
    sharedLabels: Record<string, string>,
    exemplar: null | undefined,
  ): ExportedValue {
    return { labels, sharedLabels, value, metricName, exemplar } as ExportedValue;
  }

  private emptyTally(): Tally {
    return { counts: new Array<number>(this.buckets.length + 1).fill(0), sum: 0, count: 0 };
  }
}
