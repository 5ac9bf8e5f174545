import { Counter, Histogram, type Metric, Registry, type RegistryContentType } from 'prom-client';
import { RunCounter } from './run-counter';
import { RunHistogram } from './run-histogram';

/** A registry whose content type a test may switch (Prometheus text, then OpenMetrics). */
function registry(): Registry<RegistryContentType> {
  return new Registry<RegistryContentType>();
}

/**
 * `ours` (Sundial's own metrics) exports exactly what `theirs`
 * (prom-client's, given the same events) does, as Prometheus text, as JSON and as OpenMetrics text.
 */
async function expectSameExports(
  theirs: Registry<RegistryContentType>,
  ours: Registry<RegistryContentType>,
): Promise<void> {
  expect(await ours.metrics()).toBe(await theirs.metrics());
  expect(await ours.getMetricsAsJSON()).toEqual(await theirs.getMetricsAsJSON());
  for (const registry of [theirs, ours]) registry.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  expect(await ours.metrics()).toBe(await theirs.metrics());
  for (const registry of [theirs, ours]) registry.setContentType(Registry.PROMETHEUS_CONTENT_TYPE);
}

const BUCKETS = [0.001, 0.01, 0.1, 1];
// on a bound (le is inclusive), between bounds, past the last one, zero
const VALUES = [0.001, 0.0005, 0.05, 0.1, 2.5, 0, 1, 0.3];

/** The same observations in prom-client's Histogram and in RunHistogram, each on a registry of its own. */
function twins(label?: 'handler'): {
  theirs: ReturnType<typeof registry>;
  ours: ReturnType<typeof registry>;
  observe(value: number, handler?: string): void;
  reset(): void;
} {
  const theirs = registry();
  const ours = registry();
  const name = 'test_seconds';
  const help = 'A test histogram';
  const histogram = new Histogram({
    name,
    help,
    buckets: BUCKETS,
    labelNames: label ? [label] : [],
    registers: [theirs],
  });
  const run = new RunHistogram(name, help, BUCKETS, label);
  ours.registerMetric(run as unknown as Metric);
  return {
    theirs,
    ours,
    observe(value, handler) {
      if (label) histogram.observe({ [label]: handler }, value);
      else histogram.observe(value);
      run.observe(value, handler);
    },
    reset() {
      theirs.resetMetrics();
      ours.resetMetrics();
    },
  };
}

describe('RunHistogram', () => {
  it("exports what prom-client's Histogram exports, without labels: at zero, then the observations", async () => {
    const { theirs, ours, observe } = twins();
    await expectSameExports(theirs, ours);
    expect(await ours.metrics()).toContain('test_seconds_bucket{le="+Inf"} 0');

    for (const value of VALUES) observe(value);
    await expectSameExports(theirs, ours);
    expect(await ours.metrics()).toContain('test_seconds_bucket{le="0.001"} 3');
  });

  it('exports the same series per label value, in first-observed order', async () => {
    const { theirs, ours, observe } = twins('handler');
    await expectSameExports(theirs, ours);
    VALUES.forEach((value, i) => observe(value, i % 3 === 0 ? 'mail' : 'sms'));
    await expectSameExports(theirs, ours);
    expect(await ours.metrics()).toContain('test_seconds_count{handler="sms"} 5');
  });

  it("keeps the registry's default labels and resets as prom-client does", async () => {
    const { theirs, ours, observe, reset } = twins('handler');
    for (const registry of [theirs, ours]) registry.setDefaultLabels({ app: 'worker' });
    for (const value of VALUES) observe(value, 'mail');
    await expectSameExports(theirs, ours);

    reset();
    await expectSameExports(theirs, ours);
    expect(await ours.metrics()).not.toContain('test_seconds_count');
    observe(0.2, 'sms');
    await expectSameExports(theirs, ours);
  });
});

describe('RunCounter', () => {
  it("exports what prom-client's Counter exports for the same runs, and resets as it does", async () => {
    const theirs = registry();
    const ours = registry();
    const name = 'test_runs_total';
    const help = 'Test runs';
    const counter = new Counter({ name, help, labelNames: ['handler', 'status'], registers: [theirs] });
    const runs = new RunCounter(name, help);
    ours.registerMetric(runs as unknown as Metric);
    const count = (handler: string, status: string): void => {
      counter.inc({ handler, status });
      runs.inc(handler, status);
    };

    await expectSameExports(theirs, ours);
    for (const [handler, status] of [
      ['mail', 'ok'],
      ['sms', 'failed'],
      ['mail', 'failed'],
      ['mail', 'ok'],
      ['sms', 'ok'],
    ])
      count(handler, status);
    await expectSameExports(theirs, ours);
    // (an OpenMetrics export drops a counter's `_total` for good, in prom-client's as in ours)
    expect(await ours.metrics()).toContain('test_runs{handler="mail",status="ok"} 2');

    for (const each of [theirs, ours]) each.setDefaultLabels({ app: 'worker' });
    await expectSameExports(theirs, ours);
    for (const each of [theirs, ours]) each.resetMetrics();
    await expectSameExports(theirs, ours);
    expect(await ours.metrics()).not.toContain('handler="mail"');
    count('sms', 'ok');
    await expectSameExports(theirs, ours);
  });
});
