import { SundialKeys } from '@sundial/redis';
import { Redis } from 'ioredis';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type AppProcess,
  killAll,
  ensureBuilt,
  ROOT,
  clusterEnv,
  spawnCluster,
  type RedisServer,
  startRedis,
  waitFor,
} from '@sundial/testing/harness';
import type { PrometheusServer, Sample } from './prometheus-server';
import { startPrometheus } from './prometheus-server';
import { QUERY_FILES, readYaml, repoFile } from './tools';

interface Dashboard {
  panels: { title: string; targets: { expr: string }[] }[];
}

/** The namespace the scrape targets carry, as a ServiceMonitor's do: the one the dashboard's variable picks. */
const NAMESPACE = 'sundial';

/**
 * Grafana's variables as a query of this test should read them: the installation's namespace, every
 * partition and handler, and a rate window of a few 1 s scrapes (Grafana's $__rate_interval is 4 scrape
 * intervals at least).
 */
function substitute(expr: string): string {
  return expr
    .replace(/\$__rate_interval/g, '10s')
    .replace(/\$namespace\b/g, NAMESPACE)
    .replace(/\$(partition|handler)\b/g, '.*');
}

const PARTITIONS = 2;
/** Labels Prometheus adds to every series of a target (Kubernetes' ServiceMonitor adds `namespace`, `pod`). */
const TARGET_LABELS = new Set(['job', 'instance', 'namespace', 'pod']);

/**
 * A real Prometheus scrapes a running cluster (scheduler and worker processes, private Redis) under a
 * small mixed load; then every query of the Grafana dashboard must return data and every alert rule
 * must parse and evaluate — proof that they use the metrics the services really export.
 */
describe('the Grafana dashboard and the alert rules against a real Prometheus', () => {
  let redis: RedisServer;
  let apps: AppProcess[] = [];
  let scheduler: AppProcess;
  let worker: AppProcess;
  let prometheus: PrometheusServer;
  let direct: Redis;
  // The scheduler follows a schedules file (one row), so that the sundial_schedules_file_* gauges the
  // runbooks and SundialSchedulesFileProblems name are in the scrape.
  const schedulesDir = mkdtempSync(join(tmpdir(), 'sundial-e2e-'));
  const schedulesFile = join(schedulesDir, 'schedules.yaml');

  beforeAll(async () => {
    writeFileSync(
      schedulesFile,
      'timers:\n  - { key: "file:yearly", handler: record, cron: "0 0 1 1 *", tz: UTC }\n',
    );
    [redis] = await Promise.all([startRedis(), ensureBuilt()]);
    const cluster = await spawnCluster(
      clusterEnv(redis.url, {
        SUNDIAL_PARTITIONS: String(PARTITIONS),
        SUNDIAL_SCHEDULES_FILE: schedulesFile,
      }),
      1,
      1,
    );
    [scheduler] = cluster.schedulers;
    [worker] = cluster.workers;
    apps = [scheduler, worker];
    const hostPort = (app: AppProcess) => new URL(app.url).host;
    prometheus = await startPrometheus({
      jobs: { 'sundial-scheduler': [hostPort(scheduler)], 'sundial-worker': [hostPort(worker)] },
      ruleFiles: [join(ROOT, 'deploy/prometheus/alerts.yml')],
      scrapeIntervalSeconds: 1,
      targetLabels: { namespace: NAMESPACE },
    });
    direct = new Redis(redis.url);
  }, 180_000);

  afterAll(async () => {
    direct?.disconnect();
    await prometheus?.stop();
    await killAll(apps);
    await redis?.stop();
    rmSync(schedulesDir, { recursive: true, force: true });
  });

  const post = async (spec: Record<string, unknown>): Promise<void> => {
    const reply = await scheduler.api('POST', '/v1/timers', spec);
    expect({ key: spec.key, status: reply.status }).toEqual({ key: spec.key, status: 201 });
  };

  /** The value of a series on the worker's /metrics, 0 while it is absent. */
  const workerCount = async (series: string): Promise<number> => {
    const exposition = (await worker.api<string>('GET', '/metrics')).body;
    return exposition
      .split('\n')
      .filter((line) => line.startsWith(series))
      .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
  };

  /**
   * Timers the worker finds stale at claim: scheduled to fire soon, cancelled once the dispatcher has
   * handed them off (they are in `armed`), before their due. Tried again if the cancel came too late.
   */
  async function makeStaleRuns(): Promise<void> {
    const keys = new SundialKeys('sundial', PARTITIONS);
    const armed = async (prefix: string): Promise<number> =>
      (await Promise.all(keys.all().map((p) => direct.zrange(keys.armed(p), 0, '-1'))))
        .flat()
        .filter((key) => key.startsWith(prefix)).length;
    for (let round = 0; (await workerCount('sundial_runs_stale_total')) === 0; round++) {
      if (round === 5) throw new Error('no stale claim in 5 rounds');
      const prefix = `stale:${round}:`;
      for (let n = 0; n < 20; n++) await post({ key: `${prefix}${n}`, handler: 'record', delay: 1_000 });
      await waitFor(async () => (await armed(prefix)) > 0, {
        intervalMs: 5,
        what: 'the hand-off of the stale batch',
      });
      expect((await scheduler.api('DELETE', `/v1/timers?prefix=${encodeURIComponent(prefix)}`)).status).toBe(
        200,
      );
      // the batch's fire job reaches its due within a second; its claim finds the timers gone
      await waitFor(async () => (await workerCount('sundial_runs_stale_total')) > 0, {
        timeoutMs: 3_000,
      }).catch(() => undefined);
    }
  }

  it('every dashboard query returns data, every alert expression evaluates, every rule is loaded and healthy', async () => {
    // Steady load: intervals keep runs (ok), lateness and durations flowing during every rate window.
    for (let n = 0; n < 4; n++) await post({ key: `steady:${n}`, handler: 'record', every: '250ms' });
    // A cron whose run outlasts its 1 s period: the slots it overlaps are skipped.
    await post({ key: 'overlap', handler: 'slow', cron: '* * * * * *', tz: 'UTC', payload: { ms: 2_500 } });
    // Failed runs: the http handler refuses a host outside SUNDIAL_HTTP_ALLOW (no request is sent).
    for (let n = 0; n < 3; n++) {
      await post({
        key: `failing:${n}`,
        handler: 'http',
        delay: 100,
        payload: { url: 'http://127.0.0.1:9/hook' },
      });
    }
    await post({ key: 'later', handler: 'record', delay: '1h' });
    await makeStaleRuns();
    await waitFor(async () => (await workerCount('sundial_runs_skipped_total')) > 0, {
      timeoutMs: 15_000,
      what: 'a skipped cron slot',
    });
    await waitFor(
      async () => (await workerCount('sundial_runs_total{handler="http",status="failed"}')) === 3,
      { what: 'the failing runs' },
    );

    const dashboard = JSON.parse(repoFile('deploy/grafana/dashboards/sundial.json')) as Dashboard;
    const queries = dashboard.panels.flatMap((panel) =>
      panel.targets.map((target) => ({ panel: panel.title, expr: substitute(target.expr) })),
    );
    expect(queries.length).toBeGreaterThanOrEqual(12);
    const answered: { panel: string; samples: Sample[] }[] = [];
    // Each returns at least one sample with a number (not only NaN) once Prometheus has scraped the
    // events above twice; one shared deadline for them all.
    const deadline = Date.now() + 20_000;
    for (const { panel, expr } of queries) {
      let last: unknown;
      const samples = await waitFor(
        async () => {
          const reply = await prometheus.query(expr);
          if (reply.status === 'error') throw new Error(`${panel}: ${expr} does not parse: ${reply.error}`);
          last = reply.data.result;
          return (
            reply.data.result.some((sample) => !Number.isNaN(Number(sample.value[1]))) && reply.data.result
          );
        },
        {
          timeoutMs: Math.max(deadline - Date.now(), 1),
          intervalMs: 250,
          what: `data for "${panel}": ${expr}`,
        },
      ).catch((error: Error) => {
        throw new Error(`${error.message}; last result ${JSON.stringify(last)}`);
      });
      expect(samples.length).toBeGreaterThan(0);
      answered.push({ panel, samples });
    }
    // The failing handler can be told on the dashboard (the runbook of SundialRunFailureRatioHigh and
    // the alert's description send the on-call there): a series of the failed runs names it.
    expect(
      answered
        .filter(({ panel }) => panel === 'Fired per second, by status')
        .flatMap(({ samples }) => samples.map((sample) => sample.metric.handler))
        .filter(Boolean),
    ).toContain('http');

    // The alert rules: each expression evaluates; those about a broken cluster stay quiet on this one.
    const rules = readYaml<{ groups: { rules: { alert: string; expr: string }[] }[] }>(
      'deploy/prometheus/alerts.yml',
    ).groups.flatMap((g) => g.rules);
    const quiet = [
      'SundialNoReadyWorker',
      'SundialNoScheduler',
      'SundialRedisDown',
      'SundialOverdueBacklogGrowing',
      'SundialOverdueBacklogStuck',
      'SundialRunsLost',
      'SundialReconcilerRearming',
      'SundialSchedulesFileProblems',
      'SundialCancelAllSweepStuck',
    ];
    for (const rule of rules) {
      const reply = await prometheus.query(rule.expr);
      if (reply.status === 'error')
        throw new Error(`${rule.alert}: ${rule.expr} does not parse: ${reply.error}`);
      if (quiet.includes(rule.alert))
        expect({ alert: rule.alert, result: reply.data.result }).toEqual({ alert: rule.alert, result: [] });
    }
    // ...and so does the KEDA query that scales the workers, on the namespace the targets carry.
    const scaler = readYaml<{ spec: { triggers: { metadata: { query: string } }[] } }>(
      'deploy/k8s/overlays/production/worker-scaler.yaml',
    );
    const kedaQuery = scaler.spec.triggers[0].metadata.query;
    expect(kedaQuery).toContain(`namespace="${NAMESPACE}"`);
    const keda = await prometheus.query(kedaQuery);
    expect(keda.status === 'success' && keda.data.result.map((sample: Sample) => sample.value[1])).toEqual([
      '0',
    ]);

    // Prometheus loaded alerts.yml itself and evaluated every rule without error.
    const loaded = await waitFor(
      async () => {
        const reply = await prometheus.get<{
          data: { groups: { rules: { name: string; health: string; lastError?: string }[] }[] };
        }>('/api/v1/rules');
        const all = reply.data.groups.flatMap((group) => group.rules);
        return all.length === rules.length && all.every((rule) => rule.health === 'ok') && all;
      },
      { what: 'every rule evaluated' },
    );
    expect(loaded.map((rule) => rule.name).sort()).toEqual(rules.map((rule) => rule.alert).sort());
  }, 90_000);

  /**
   * What the on-call reads names metrics and labels: the runbooks, the README, the dashboard, the alert
   * rules and the KEDA trigger. Each metric must be one the apps export (in this cluster's real scrapes,
   * after the load above) and each label named on it one its samples carry: a misspelt name in a runbook
   * query shows an empty result and leaves the on-call stuck.
   */
  it('every metric and label named in the runbooks, README, dashboard and alert rules is in a real scrape', async () => {
    const scrape = (
      await Promise.all(
        [scheduler, worker].map(async (app) => (await app.api<string>('GET', '/metrics')).body),
      )
    ).join('\n');
    const families = new Map<string, string>(
      [...scrape.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m): [string, string] => [m[1], m[2]]),
    );
    const family = (name: string): string | undefined => {
      if (families.has(name)) return name;
      const base = name.replace(/_(bucket|sum|count)$/, '');
      return families.get(base) === 'histogram' ? base : undefined;
    };
    const labelsOf = (name: string): Set<string> =>
      new Set(
        [...scrape.matchAll(new RegExp(`^${name}\\{([^}]*)\\}`, 'gm'))].flatMap((m) =>
          [...m[1].matchAll(/(\w+)="/g)].map((l) => l[1]),
        ),
      );
    for (const path of QUERY_FILES) {
      const text = repoFile(path);
      const unknown = [...new Set(text.match(/\bsundial_[a-z_]+[a-z]/g))].filter((name) => !family(name));
      expect({ path, unknown }).toEqual({ path, unknown: [] });
      const badLabels = [...text.matchAll(/\b(sundial_[a-z_]+[a-z])\{([^}]*)\}/g)].flatMap(
        ([, name, selector]) =>
          [...selector.matchAll(/(\w+)\s*=~?\s*\\?"/g)]
            .map((l) => l[1])
            .filter((label) => !TARGET_LABELS.has(label) && !labelsOf(name).has(label))
            .map((label) => `${name}{${label}}`),
      );
      expect({ path, badLabels }).toEqual({ path, badLabels: [] });
    }
  });

  /**
   * SundialSchedulesFileProblems' runbook sends the on-call to the scheduler's warn line of a refused row
   * and names its fields: each must be a field of that JSON line (it said `message`; pino writes `msg`).
   * Run after the alerts were checked quiet: the refused row raises sundial_schedules_file_problems.
   */
  it("a refused schedules-file row's warn line has the fields the runbook names", async () => {
    writeFileSync(schedulesFile, 'timers:\n  - { key: "file:bad", handler: record, every: "10ms" }\n');
    const line = await waitFor(
      () =>
        scheduler.lines.find((l) => l.includes('"file"') && l.includes('"file:bad"') && l.includes('"warn"')),
      { what: "the refused row's warn line" },
    );
    const section = repoFile('docs/operations.md').split('\n### SundialSchedulesFileProblems\n')[1]!;
    const named = /each names\s+([\s\S]*?)\. Common ones/.exec(section)![1]!;
    const fields = [...named.matchAll(/`(\w+)`/g)].map((m) => m[1]!).filter((name) => name !== 'timers');
    expect(fields.length).toBeGreaterThanOrEqual(5);
    const logged = JSON.parse(line) as Record<string, unknown>;
    expect(fields.filter((field) => !(field in logged))).toEqual([]);
  });
});
