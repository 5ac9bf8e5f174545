import type { K8sObject } from './tools';

/** The shapes of the rendered objects the deploy suites read, and how they read them. */
export interface Probe {
  httpGet: { path: string; port: string | number };
}
export interface Container {
  name: string;
  args: string[];
  ports: { name: string; containerPort: number }[];
  env: {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string }; fieldRef?: { fieldPath: string } };
  }[];
  envFrom: { configMapRef: { name: string } }[];
  startupProbe: Probe;
  livenessProbe: Probe;
  readinessProbe: Probe;
  lifecycle: { preStop: { exec: { command: string[] } } };
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  securityContext: Record<string, unknown>;
}
export interface PodSpec {
  terminationGracePeriodSeconds: number;
  automountServiceAccountToken?: boolean;
  topologySpreadConstraints?: {
    topologyKey: string;
    whenUnsatisfiable: string;
    labelSelector: { matchLabels: Record<string, string> };
  }[];
  securityContext: Record<string, unknown>;
  containers: Container[];
}
export interface Deployment extends K8sObject {
  spec: {
    replicas: number;
    selector: { matchLabels: Record<string, string> };
    template: { metadata: { labels: Record<string, string> }; spec: PodSpec };
  };
}

export const find = <T extends K8sObject>(objects: K8sObject[], kind: string, name: string): T => {
  const found = objects.find((object) => object.kind === kind && object.metadata.name.startsWith(name));
  if (!found)
    throw new Error(`no ${kind} ${name} in ${objects.map((o) => `${o.kind}/${o.metadata.name}`).join(', ')}`);
  return found as T;
};

/**
 * The environment a container starts with: its ConfigMap's data, then its own `env` values, the pod's
 * namespace (`fieldRef`) given as `namespace`, and `$(NAME)` references expanded as Kubernetes does.
 */
export function containerEnv(
  objects: K8sObject[],
  container: Container,
  namespace = 'default',
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const source of container.envFrom) {
    Object.assign(
      env,
      find<K8sObject & { data: Record<string, string> }>(objects, 'ConfigMap', source.configMapRef.name).data,
    );
  }
  for (const variable of container.env) {
    if (variable.valueFrom?.fieldRef?.fieldPath === 'metadata.namespace') env[variable.name] = namespace;
    if (variable.value === undefined) continue;
    env[variable.name] = variable.value.replace(
      /\$\(([A-Z0-9_]+)\)/g,
      (text, name: string) => env[name] ?? text,
    );
  }
  return env;
}

export const matches = (selector: Record<string, string>, labels: Record<string, string> = {}): boolean =>
  Object.entries(selector).every(([key, value]) => labels[key] === value);
