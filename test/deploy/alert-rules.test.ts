import { prometheusBinary, readYaml, repoFile, run } from './tools';

interface AlertRule {
  alert: string;
  expr: string;
  annotations: { summary: string; description: string; runbook: string };
}

const alertRules = (): AlertRule[] =>
  readYaml<{ groups: { rules: AlertRule[] }[] }>('deploy/prometheus/alerts.yml').groups.flatMap(
    (group) => group.rules,
  );

/** GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to dashes. */
function anchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** deploy/prometheus checked by Prometheus' own tool (Debian's `prometheus` package). */
describe('Prometheus config and alert rules', () => {
  const promtool = prometheusBinary('promtool');

  it('promtool check config: the compose Prometheus config and the rule files it loads are valid', () => {
    expect(run(promtool, ['check', 'config', 'deploy/prometheus/prometheus.yml'])).toMatch(/SUCCESS/);
  });

  it('promtool check rules: every rule parses', () => {
    const output = run(promtool, ['check', 'rules', 'deploy/prometheus/alerts.yml']);
    expect(output).toContain(`SUCCESS: ${alertRules().length} rules found`);
  });

  it('promtool test rules: each alert fires on a sick cluster and stays quiet on a healthy one', () => {
    const output = run(promtool, ['test', 'rules', 'deploy/prometheus/alerts.test.yml']);
    expect(output).toMatch(/SUCCESS/);
    // every alert is exercised by the unit tests, firing and quiet
    const tests = repoFile('deploy/prometheus/alerts.test.yml');
    for (const rule of alertRules()) {
      expect(tests.match(new RegExp(`alertname: ${rule.alert}\\b`, 'g'))?.length).toBeGreaterThanOrEqual(2);
    }
  });

  it('every alert has a summary, a description and a runbook section that exists in docs/operations.md', () => {
    const anchors = new Set(
      repoFile('docs/operations.md')
        .split('\n')
        .filter((line) => /^#{1,6} /.test(line))
        .map((line) => anchor(line.replace(/^#+/, ''))),
    );
    for (const { alert, annotations } of alertRules()) {
      expect({ alert, summary: annotations.summary.length > 0 }).toEqual({ alert, summary: true });
      expect({ alert, description: annotations.description.length > 0 }).toEqual({
        alert,
        description: true,
      });
      const [file, section] = annotations.runbook.split('#');
      expect({ alert, file, found: anchors.has(section) }).toEqual({
        alert,
        file: 'docs/operations.md',
        found: true,
      });
    }
  });

  it("the README's and the spec's lists of the alert rules name every alert, and no other", () => {
    const names = alertRules()
      .map((rule) => rule.alert)
      .sort();
    // the paragraph of each that lists them (a new alert added to alerts.yml only was missing from both)
    const listed = (file: string, opening: string): string[] => {
      const paragraph = repoFile(file)
        .split('\n\n')
        .find((text) => text.includes(opening));
      return [...new Set(paragraph?.match(/\bSundial[A-Z]\w+/g) ?? [])].sort();
    };
    expect({ file: 'README.md', names: listed('README.md', 'The alert rules are') }).toEqual({
      file: 'README.md',
      names,
    });
    expect({ file: 'docs/spec.md', names: listed('docs/spec.md', 'holds the alert rules') }).toEqual({
      file: 'docs/spec.md',
      names,
    });
  });

  it('the Kubernetes PrometheusRule carries the same rules (scripts/sync-prometheus-rule.js was run)', () => {
    const committed = readYaml<{ spec: unknown }>('deploy/k8s/overlays/production/prometheus-rule.yaml');
    expect(committed.spec).toEqual({
      groups: readYaml<{ groups: unknown }>('deploy/prometheus/alerts.yml').groups,
    });
  });
});
