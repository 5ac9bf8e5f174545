// Writes deploy/k8s/overlays/production/prometheus-rule.yaml (the prometheus-operator PrometheusRule) from
// deploy/prometheus/alerts.yml, so Kubernetes and docker compose alert on the same rules.
// Run it after editing alerts.yml: `node scripts/sync-prometheus-rule.js` (test/deploy checks it was).
const { readFileSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');
const YAML = require('yaml');

const root = join(__dirname, '..');
const target = 'deploy/k8s/overlays/production/prometheus-rule.yaml';

/** The PrometheusRule YAML for the rule groups of alerts.yml. */
function prometheusRule() {
  const { groups } = YAML.parse(readFileSync(join(root, 'deploy/prometheus/alerts.yml'), 'utf8'));
  const rule = {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PrometheusRule',
    metadata: { name: 'sundial', labels: { 'app.kubernetes.io/name': 'sundial' } },
    spec: { groups },
  };
  const header = `# Generated from deploy/prometheus/alerts.yml by scripts/sync-prometheus-rule.js: edit that file.\n`;
  return header + YAML.stringify(rule, { lineWidth: 0 });
}

if (require.main === module) {
  writeFileSync(join(root, target), prometheusRule());
  console.log(`sync-prometheus-rule: wrote ${target}`);
}

module.exports = { prometheusRule, target };
