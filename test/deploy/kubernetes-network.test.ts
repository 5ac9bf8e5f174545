import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '@sundial/testing/harness';
import { hostRefusal } from '@sundial/server';
import { schedulerConfigFromEnv } from '../../apps/scheduler/src/scheduler-config';
import { containerEnv, type Deployment, find, matches } from './k8s-objects';
import { type K8sObject, kustomize } from './tools';

interface Peer {
  podSelector?: { matchLabels?: Record<string, string> };
  namespaceSelector?: { matchLabels?: Record<string, string> };
  ipBlock?: { cidr: string; except?: string[] };
}
interface Rule {
  from?: Peer[];
  to?: Peer[];
  ports?: { port: string | number; protocol: string }[];
}
interface NetworkPolicy extends K8sObject {
  spec: {
    podSelector: { matchLabels: Record<string, string> };
    policyTypes: string[];
    ingress: Rule[];
    egress: Rule[];
  };
}

/** The namespaces a peer rule names (kubernetes.io/metadata.name), `this` for a podSelector alone. */
const namespacesOf = (rule: Rule): string[] =>
  (rule.from ?? []).map((peer) =>
    peer.namespaceSelector
      ? (peer.namespaceSelector.matchLabels?.['kubernetes.io/metadata.name'] ?? 'any')
      : 'this',
  );
const portsOf = (rules: Rule[]): (string | number)[] =>
  rules.flatMap((r) => (r.ports ?? []).map((p) => p.port));

/**
 * The production overlay's network rules (docs/operations.md "Exposing the scheduler and the
 * workers") and what follows its namespace: the NetworkPolicies, the scheduler's SUNDIAL_ALLOWED_HOSTS
 * and KEDA's query.
 */
describe('Kubernetes: who may call the pods, and by which name', () => {
  const production = kustomize('deploy/k8s/overlays/production');
  const policy = (name: string) => find<NetworkPolicy>(production, 'NetworkPolicy', name);

  it.each(['sundial-scheduler', 'sundial-worker'])(
    '%s: one policy for both directions selects exactly its pods; ingress only on its port http',
    (name) => {
      const { spec } = policy(name);
      const selected = production.filter(
        (o): o is Deployment =>
          o.kind === 'Deployment' &&
          matches(spec.podSelector.matchLabels, (o as Deployment).spec.template.metadata.labels),
      );
      expect(selected.map((d) => d.metadata.name)).toEqual([name]);
      expect(spec.policyTypes.sort()).toEqual(['Egress', 'Ingress']);
      expect(portsOf(spec.ingress)).toEqual(['http']);
      const [container] = selected[0].spec.template.spec.containers;
      expect(container.ports.map((p) => p.name)).toEqual(['http']);
      // Redis (and Sentinel), DNS to kube-dns, traces to the collector in monitoring
      expect(portsOf(spec.egress)).toEqual(expect.arrayContaining([6379, 26379, 53, 4318]));
      const dns = spec.egress.find((rule) => portsOf([rule]).includes(53));
      expect(dns?.to).toEqual([
        {
          namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } },
          podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } },
        },
      ]);
    },
  );

  it('the scheduler takes calls from its namespace, the Ingress controller and Prometheus; workers only scrapes', () => {
    expect(policy('sundial-scheduler').spec.ingress.flatMap(namespacesOf).sort()).toEqual([
      'ingress-nginx',
      'monitoring',
      'this',
    ]);
    expect(policy('sundial-worker').spec.ingress.flatMap(namespacesOf)).toEqual(['monitoring']);
    // the ServiceMonitor's Prometheus is in monitoring (KEDA's serverAddress names it there)
    const scaler = JSON.stringify(find(production, 'ScaledObject', 'sundial-worker'));
    expect(scaler).toContain('.monitoring.svc');
  });

  it('only workers call out on 443 (the http handler), never to an internal address', () => {
    expect(portsOf(policy('sundial-scheduler').spec.egress)).not.toContain(443);
    const https = policy('sundial-worker').spec.egress.filter((rule) => portsOf([rule]).includes(443));
    expect(https).toHaveLength(1);
    const blocks = (https[0].to ?? []).map((peer) => peer.ipBlock);
    expect(blocks).toEqual([
      expect.objectContaining({ cidr: '0.0.0.0/0' }),
      expect.objectContaining({ cidr: '::/0' }),
    ]);
    expect(blocks[0]?.except).toEqual(
      expect.arrayContaining([
        '10.0.0.0/8',
        '172.16.0.0/12',
        '192.168.0.0/16',
        '169.254.0.0/16',
        '127.0.0.0/8',
      ]),
    );
    expect(blocks[1]?.except).toEqual(expect.arrayContaining(['fc00::/7', 'fe80::/10', '::1/128']));
  });

  it("the scheduler answers to its Service's names in its own namespace, and not to others", () => {
    const scheduler = find<Deployment>(production, 'Deployment', 'sundial-scheduler');
    const [container] = scheduler.spec.template.spec.containers;
    const env = containerEnv(production, container, scheduler.metadata.namespace);
    const { allowedHosts } = schedulerConfigFromEnv({ ...env, SUNDIAL_API_TOKEN: undefined });
    const service = find(production, 'Service', 'sundial-scheduler').metadata.name;
    for (const host of [
      service,
      `${service}.sundial`,
      `${service}.sundial.svc:3000`,
      `${service}.sundial.svc.cluster.local`,
      '10.0.0.7:3000',
    ]) {
      expect({ host, refused: hostRefusal(host, allowedHosts, 'scheduler') }).toEqual({
        host,
        refused: null,
      });
    }
    for (const host of [`${service}.other`, 'sundial.example.com']) {
      expect(hostRefusal(host, allowedHosts, 'scheduler')?.reason).toBe('forbidden');
    }
  });

  it('in another namespace, KEDA counts that namespace’s timers and the scheduler answers to its names there', () => {
    // The overlay as an operator would change it: its one `namespace:` line.
    const copy = mkdtempSync(join(tmpdir(), 'sundial-k8s-'));
    try {
      cpSync(join(ROOT, 'deploy', 'k8s'), copy, { recursive: true });
      const kustomization = join(copy, 'overlays', 'production', 'kustomization.yaml');
      writeFileSync(
        kustomization,
        readFileSync(kustomization, 'utf8').replace(/^namespace: sundial$/m, 'namespace: timers'),
      );
      const objects = kustomize(join(copy, 'overlays', 'production'));
      const scaler = find<K8sObject & { spec: { triggers: { metadata: { query: string } }[] } }>(
        objects,
        'ScaledObject',
        'sundial-worker',
      );
      expect(scaler.metadata.namespace).toBe('timers');
      expect(scaler.spec.triggers[0].metadata.query).toBe(
        'sum(max by (partition) (sundial_timers_overdue{namespace="timers"}))',
      );
      const scheduler = find<Deployment>(objects, 'Deployment', 'sundial-scheduler');
      const env = containerEnv(
        objects,
        scheduler.spec.template.spec.containers[0],
        scheduler.metadata.namespace,
      );
      expect(
        hostRefusal('sundial-scheduler.timers.svc', schedulerConfigFromEnv(env).allowedHosts, 'scheduler'),
      ).toBeNull();
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
