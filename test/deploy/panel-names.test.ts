import { repoFile } from './tools';

const titles = (): string[] =>
  (
    JSON.parse(repoFile('deploy/grafana/dashboards/sundial.json')) as { panels: { title: string }[] }
  ).panels.map((panel) => panel.title);

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
describe('the dashboard panels the docs name', () => {
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
});
