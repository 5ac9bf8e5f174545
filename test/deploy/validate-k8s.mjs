// Validates Kubernetes objects (a JSON array on stdin) against the schemas of the kubernetes-models
// packages (ESM only, hence a child process of the jest suite). Prints [{ kind, name, error? }].
const MODULES = {
  v1: 'kubernetes-models/v1',
  'apps/v1': 'kubernetes-models/apps/v1',
  'policy/v1': 'kubernetes-models/policy/v1',
  'networking.k8s.io/v1': 'kubernetes-models/networking.k8s.io/v1',
  'monitoring.coreos.com/v1': '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1',
  'keda.sh/v1alpha1': '@kubernetes-models/keda/keda.sh/v1alpha1',
};

let input = '';
for await (const chunk of process.stdin) input += chunk;
const results = [];
for (const object of JSON.parse(input)) {
  const result = { kind: object.kind, name: object.metadata?.name };
  try {
    const path = MODULES[object.apiVersion];
    if (!path) throw new Error(`no schema for apiVersion ${object.apiVersion}`);
    const Model = (await import(path))[object.kind];
    if (!Model) throw new Error(`no schema for ${object.apiVersion} ${object.kind}`);
    new Model(object).validate();
  } catch (error) {
    result.error = error.message;
  }
  results.push(result);
}
process.stdout.write(JSON.stringify(results));
