import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ROOT } from '@sundial/testing/harness';
import { schedulerConfigFromEnv } from '../../apps/scheduler/src/scheduler-config';
import { type Container, containerEnv, type Deployment, find } from './k8s-objects';
import { type K8sObject, kustomize, repoFile } from './tools';

interface Volume {
  name: string;
  configMap?: { name: string };
}
interface Mounted extends Container {
  volumeMounts: { name: string; mountPath: string; subPath?: string }[];
}

/** The kustomization of docs/operations.md "The schedules file through GitOps", as written there. */
function documentedOverlay(): { text: string; resources?: string[] } {
  const section = repoFile('docs/operations.md').split('\n## The schedules file through GitOps\n')[1]!;
  const text = /```yaml\n([\s\S]*?)```/.exec(section.split('\n## ')[0]!)![1]!;
  return { text, ...(parseYaml(text) as { resources?: string[] }) };
}

/**
 * The overlay the GitOps section gives, rendered as a reader would use it: in a directory of its own
 * beside deploy/k8s/overlays/production, over that overlay. Before, it had no `namespace`: the
 * ConfigMap it generates went to kubectl's current namespace (`default`) while the scheduler pods,
 * in `sundial`, waited for it in ContainerCreating.
 */
describe('the schedules-file overlay of docs/operations.md, rendered', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sundial-gitops-'));
  let objects: K8sObject[];

  beforeAll(() => {
    const { text, resources } = documentedOverlay();
    // over the production overlay, from a directory beside it (here a temp dir: the path from there)
    const production = relative(dir, join(ROOT, 'deploy/k8s/overlays/production'));
    expect(resources ?? ['../production']).toEqual(['../production']);
    const overlay = resources
      ? text.replace('../production', production)
      : `resources: [${production}]\n${text}`;
    writeFileSync(join(dir, 'kustomization.yaml'), overlay);
    writeFileSync(join(dir, 'schedules.yaml'), 'timers: []\n');
    objects = kustomize(dir);
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('mounts the ConfigMap, in the scheduler’s namespace and without a hash suffix, where the scheduler reads the file', () => {
    const scheduler = find<Deployment>(objects, 'Deployment', 'sundial-scheduler');
    const configMap = objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === 'sundial-schedules');
    expect(configMap?.metadata.namespace).toBe(scheduler.metadata.namespace);
    expect(scheduler.metadata.namespace).toBe('sundial');

    const spec = scheduler.spec.template.spec as Deployment['spec']['template']['spec'] & {
      volumes: Volume[];
    };
    const volume = spec.volumes.find((v) => v.configMap?.name === 'sundial-schedules');
    const container = spec.containers[0] as Mounted;
    const mount = container.volumeMounts.find((m) => m.name === volume?.name);
    // a directory mount: the kubelet never updates a subPath one
    expect(mount).toBeDefined();
    expect(mount!.subPath).toBeUndefined();
    const file = schedulerConfigFromEnv(containerEnv(objects, container, 'sundial')).schedulesFile;
    expect(file).toBe(`${mount!.mountPath}/schedules.yaml`);
  });
});
