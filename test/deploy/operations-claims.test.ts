import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '@sundial/testing/harness';
import { QUERY_FILES, readYaml, repoFile, run } from './tools';

/** The HPA's default `--horizontal-pod-autoscaler-tolerance`: no change while usage/target is within 10 % of 1. */
const HPA_TOLERANCE = 0.1;

/**
 * The workers KEDA's HPA wants for `overdue` with `current` running, as the HPA controller computes an
 * external metric with an AverageValue target (KEDA's default metricType): ceil(overdue / threshold)
 * once the usage ratio is off 1 by more than the tolerance, kept to the ScaledObject's bounds.
 */
function hpaReplicas(overdue: number, current: number, threshold: number, min: number, max: number): number {
  const ratio = overdue / (threshold * current);
  const wanted = Math.abs(1 - ratio) > HPA_TOLERANCE ? Math.ceil(overdue / threshold) : current;
  return Math.min(max, Math.max(min, wanted));
}

/** Collapses line breaks and runs of spaces (and YAML comment marks), so a phrase reads the same wrapped. */
const flat = (text: string): string => text.replace(/\n\s*#?\s*/g, ' ').replace(/\s+/g, ' ');

/** Numbers and links in docs/operations.md an operator acts on, checked against the files they describe. */
describe('docs/operations.md as the deploy files and the bench have it', () => {
  it('the overdue count that brings a fourth worker is the one KEDA’s HPA scales at', () => {
    const scaler = readYaml<{
      spec: {
        minReplicaCount: number;
        maxReplicaCount: number;
        triggers: { metadata: { threshold: string; metricType?: string } }[];
      };
    }>('deploy/k8s/overlays/production/worker-scaler.yaml').spec;
    const [{ metadata }] = scaler.triggers as [(typeof scaler.triggers)[0]];
    expect(metadata.metricType ?? 'AverageValue').toBe('AverageValue');
    const threshold = Number(metadata.threshold);
    const replicas = (overdue: number, current: number): number =>
      hpaReplicas(overdue, current, threshold, scaler.minReplicaCount, scaler.maxReplicaCount);
    // the smallest counts that bring a fourth worker to three, a fifth to four
    let fourthAt = 1;
    while (replicas(fourthAt, scaler.minReplicaCount) === scaler.minReplicaCount) fourthAt++;
    let fifthAt = fourthAt;
    while (replicas(fifthAt, 4) === 4) fifthAt++;

    const operations = flat(repoFile('docs/operations.md'));
    const comment = flat(repoFile('deploy/k8s/overlays/production/worker-scaler.yaml'));
    const said = {
      sizing: /get a fourth from (\d+) overdue timers on \(not \d+\), four a fifth from (\d+)/.exec(
        operations,
      ),
      growing: /from (\d+) overdue on with three workers/.exec(operations),
      scaler: /a fourth worker from (\d+) overdue on/.exec(comment),
    };
    expect({
      sizing: said.sizing?.slice(1).map(Number),
      growing: Number(said.growing?.[1]),
      scaler: Number(said.scaler?.[1]),
    }).toEqual({ sizing: [fourthAt, fifthAt], growing: fourthAt, scaler: fourthAt });
  });

  it('Sizing links the bench results of the run it names', () => {
    const sizing = repoFile('docs/operations.md').split('\n## Sizing\n')[1]!.split('\n## ')[0]!;
    const [, path, day, time] =
      /\]\(\.\.\/(bench\/results\/[\w.-]+\.md)\),\s+.*?the run of (\d{4}-\d\d-\d\d) (\d\d:\d\d)/s.exec(
        sizing,
      ) ?? [];
    expect(repoFile(path!).split('\n')[0]).toContain(`${day}T${time}:`);
    // the figures of that run it quotes
    const results = repoFile(path!);
    for (const [, figure] of sizing.matchAll(/(\d[\d,]*) at \d\d-\d\d \d\d:\d\d/g)) {
      if (sizing.includes(`${figure} at ${day!.slice(5)} ${time}`))
        expect(results).toContain(`| ${figure} |`);
    }
  });

  // Redis's min-replicas-max-lag is seconds since a replica's last acknowledgement, sent every second: a
  // lag of 1–2 s is a healthy replica's, so at 1 a late acknowledgement refuses writes. The docs said 1 in
  // one place and "10 (or less)" in another.
  it('every min-replicas-max-lag the docs suggest is 10 (Redis’s default), and the floor of 3 is said', () => {
    const docs = ['README.md', 'docs/operations.md', 'docs/spec.md'].map((path) => flat(repoFile(path)));
    const values = docs.flatMap((text) =>
      [...text.matchAll(/min-replicas-max-lag`? (\d+)/g)].map((match) => Number(match[1])),
    );
    expect(values.length).toBeGreaterThanOrEqual(3);
    expect(new Set(values)).toEqual(new Set([10]));
    expect(flat(repoFile('docs/operations.md'))).toContain('keep it at 3 or more');
  });
});

/**
 * The gauges every scheduler replica reads from the same Redis on each scrape (`backlogGauge` in
 * libs/redis/src/metrics/sundial-metrics.ts): two replicas export one count twice.
 */
const readFromRedis = (): string[] =>
  [
    ...repoFile('libs/redis/src/metrics/sundial-metrics.ts').matchAll(
      /this\.backlogGauge\(\s*'(sundial_\w+)'/g,
    ),
  ].map((m) => m[1]!);

describe('the test files the operator files name', () => {
  // deploy/prometheus/alerts.test.yml said it was run by test/deploy/promtool.test.ts, which is not there
  it('exist', () => {
    const files = ['docs/operations.md', ...run('git', ['ls-files', 'deploy']).split('\n').filter(Boolean)];
    const missing = files.flatMap((path) =>
      [...repoFile(path).matchAll(/(?<![\w/.-])(?:examples\/\w+\/)?test\/[\w/.-]+\.test\.ts\b/g)]
        .map((m) => m[0])
        .filter((named) => !existsSync(join(ROOT, named)))
        .map((named) => `${path}: ${named}`),
    );
    expect(missing).toEqual([]);
  });
});

describe('queries over the gauges the schedulers read from Redis', () => {
  // The runbook of SundialOverdueBacklogStuck had `sum(sundial_queue_jobs{state="waiting"})`: with the
  // two scheduler replicas of the manifests, twice the fire jobs that wait.
  it('take one replica’s reading (max or min), never the sum or count over the replicas', () => {
    const gauges = readFromRedis();
    expect(gauges).toEqual(expect.arrayContaining(['sundial_timers_overdue', 'sundial_queue_jobs']));
    const summed = new RegExp(
      `\\b(sum|count)\\s*(by\\s*\\([^)]*\\)\\s*)?\\(\\s*(${gauges.join('|')})\\b[^)]*\\)`,
      'g',
    );
    const found = QUERY_FILES.flatMap((path) =>
      [...repoFile(path).matchAll(summed)].map((m) => `${path}: ${m[0]}`),
    );
    expect(found).toEqual([]);
  });
});

/** A Prometheus duration as the runbooks write it: `10m` → `10 minutes`, `1m` → `a minute`, `1h` → `an hour`. */
function spoken(duration: string): string[] {
  const [, count, unit] = /^(\d+)([mh])$/.exec(duration) ?? [];
  const name = unit === 'h' ? 'hour' : 'minute';
  return count === '1' ? [`a ${name}`, `an ${name}`] : [`${count} ${name}s`];
}

describe('each alert’s runbook section names the durations of its rule', () => {
  const rules = readYaml<{ groups: { rules: { alert: string; expr: string; for?: string }[] }[] }>(
    'deploy/prometheus/alerts.yml',
  ).groups.flatMap((group) => group.rules);
  const operations = repoFile('docs/operations.md');

  it.each(rules.map((rule) => [rule.alert, rule]))('%s', (alert, { expr, for: pending }) => {
    const section = flat(operations.split(`\n### ${alert}\n`)[1]!.split('\n#')[0]!);
    const windows = [...new Set([...expr.matchAll(/\[(\d+[mh])\]/g)].map((m) => m[1]!))];
    // the window the rule looks over, and how long it must hold: either alone, or their sum ("for 20
    // minutes" of a 15-minute window held 5)
    const said = (duration: string): boolean => spoken(duration).some((words) => section.includes(words));
    const missing = windows.filter((window) => !said(window));
    if (pending && !said(pending)) {
      const sum = windows.map((w) => Number(/\d+/.exec(w)![0]) + Number(/\d+/.exec(pending)![0]));
      if (!sum.some((minutes) => said(`${minutes}m`))) missing.push(`for ${pending}`);
    }
    expect({ alert, missing }).toEqual({ alert, missing: [] });
  });
});
