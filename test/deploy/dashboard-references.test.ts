import { readYaml, repoFile } from './tools';

interface Dashboard {
  panels: { title: string; targets: { expr: string }[] }[];
  templating: { list: { name: string; definition?: string; includeAll?: boolean; allValue?: string }[] };
}

const dashboard = (): Dashboard =>
  JSON.parse(repoFile('deploy/grafana/dashboards/sundial.json')) as Dashboard;
const titles = (): string[] => dashboard().panels.map((panel) => panel.title);

/** Every `"…"` of a Markdown file, a line break inside one read as a space (prose wraps mid-name). */
function quoted(path: string): string[] {
  return [...repoFile(path).matchAll(/"([^"\n]+(?:\n[^"\n]+)?)"/g)].map((m) =>
    m[1].replace(/\s*\n\s*/g, ' '),
  );
}

/**
 * The runbooks send the on-call to dashboard panels by name: a name they cannot find on the dashboard
 * leaves them searching ("Overdue timers" for the panel "Overdue timers by partition" did).
 */
describe('the dashboard as the docs and the alerts refer to it', () => {
  it('docs/operations.md and the README name panels by their full title, never a shortened one', () => {
    const panels = titles();
    for (const path of ['docs/operations.md', 'README.md']) {
      const shortened = quoted(path).filter(
        (name) => !panels.includes(name) && panels.some((title) => title.startsWith(name)),
      );
      expect({ path, shortened }).toEqual({ path, shortened: [] });
    }
  });

  it("the README's list of panels ('Watch it in Grafana') names each panel of the dashboard, in its order", () => {
    const section = repoFile('README.md').split('### Watch it in Grafana')[1].split('\n### ')[0];
    const listed = [...section.matchAll(/^- \*\*(.+?)\*\*:/gm)].map((m) => m[1]);
    expect(listed).toEqual(titles());
  });

  /**
   * On Kubernetes each installation is a namespace (docs/operations.md "Several installations on one
   * Redis"): with staging and production scraped by one Prometheus, every panel summed or took the max of
   * both, and nothing on the dashboard could pick one. Every metric selector of every panel takes the
   * `namespace` variable; its All (`.*`) also matches series without the label (Docker Compose).
   */
  it('every panel query selects the namespace the `namespace` variable picks', () => {
    const variable = dashboard().templating.list.find((v) => v.name === 'namespace');
    expect(variable).toMatchObject({
      definition: expect.stringMatching(/^label_values\(sundial_\w+, namespace\)$/),
      includeAll: true,
      allValue: '.*',
    });
    const unselected = dashboard().panels.flatMap((panel) =>
      panel.targets.flatMap(({ expr }) =>
        [...expr.matchAll(/\b(sundial_\w+|up|process_\w+)\b(\{[^}]*\})?/g)]
          .filter(([, , selector]) => !selector?.includes('namespace=~"$namespace"'))
          .map(([whole]) => `${panel.title}: ${whole}`),
      ),
    );
    expect(unselected).toEqual([]);
  });

  /**
   * An alert sends the on-call to the dashboard: each metric a rule reads is on a panel. None showed
   * sundial_fire_consumers (SundialNoReadyWorker; which partition no worker takes, for
   * SundialOverdueBacklogStuck) nor sundial_schedules_file_problems (SundialSchedulesFileProblems).
   */
  it('every metric an alert rule reads is on a panel', () => {
    const shown = dashboard()
      .panels.flatMap((panel) => panel.targets.map((target) => target.expr))
      .join('\n');
    const rules = readYaml<{ groups: { rules: { alert: string; expr: string }[] }[] }>(
      'deploy/prometheus/alerts.yml',
    ).groups.flatMap((group) => group.rules);
    const missing = rules.flatMap(({ alert, expr }) =>
      [...new Set(expr.match(/\bsundial_\w+/g))]
        .filter((name) => !new RegExp(`\\b${name}\\b`).test(shown))
        .map((name) => `${alert}: ${name}`),
    );
    expect(missing).toEqual([]);
  });

  /**
   * An alert on a counter's increase over a window (lost runs, re-arms, Redis data lost) is read on the
   * dashboard as that same count: a panel over Grafana's own `$__rate_interval` shows a number that
   * changes with the zoom and cannot be set beside the alert's threshold, and no panel left the on-call
   * of SundialRedisDataLost with nothing to look at.
   */
  it('each counter an alert takes the increase of over a window is on the dashboard over that window', () => {
    // read without their selectors (the namespace variable's): the same counter over the same window
    const exprs = dashboard().panels.flatMap((panel) =>
      panel.targets.map((target) => target.expr.replace(/\{[^}]*\}/g, '')),
    );
    const rules = readYaml<{ groups: { rules: { alert: string; expr: string }[] }[] }>(
      'deploy/prometheus/alerts.yml',
    ).groups.flatMap((group) => group.rules);
    const increases = rules.flatMap(({ alert, expr }) =>
      [...expr.matchAll(/increase\((sundial_\w+)\[(\w+)\]\)/g)].map(([query]) => ({ alert, query })),
    );
    expect(increases.length).toBeGreaterThanOrEqual(3);
    for (const { alert, query } of increases) {
      expect({ alert, query, shown: exprs.some((expr) => expr.includes(query)) }).toEqual({
        alert,
        query,
        shown: true,
      });
    }
  });
});
