import { type Metric, Registry } from 'prom-client';
import { SchedulesFileMetrics } from '../../apps/scheduler/src/schedules/schedules-metrics';
import { SundialMetrics } from '@sundial/redis';
import { repoFile } from './tools';

interface Row {
  name: string;
  type: string;
  labels: string[];
}

/** The rows of docs/spec.md §6.1's table: metric, type, labels. */
function specRows(): Row[] {
  const section = repoFile('docs/spec.md').split('\n### 6.1 Metrics\n')[1]!.split('\n### ')[0]!;
  return section
    .split('\n')
    .map((line) => line.split('|').map((cell) => cell.trim()))
    .filter((cells) => /^`sundial_/.test(cells[1] ?? ''))
    .map((cells) => ({
      name: cells[1]!.replace(/`/g, ''),
      type: cells[2]!,
      labels: cells[3] === '—' ? [] : [...cells[3]!.matchAll(/`(\w+)`/g)].map((m) => m[1]!),
    }));
}

/** Every Sundial metric a scheduler (with a schedules file) and a worker register, as registered. */
async function registered(): Promise<Row[]> {
  const registry = new Registry();
  const metrics = new SundialMetrics(registry);
  // a scheduler's backlog gauges and sundial_redis_up come with its first tracked source
  const none = (): Promise<Record<string, number>> => Promise.resolve({});
  metrics.trackBacklog({ pending: none, queueJobs: none, overdue: none, ping: () => Promise.resolve() });
  new SchedulesFileMetrics(registry);
  const rows: Row[] = [];
  for (const metric of registry.getMetricsAsArray()) {
    const { name, type } = await (metric as unknown as Metric).get();
    const declared = (metric as unknown as { labelNames?: string[]; label?: string }).labelNames;
    rows.push({ name, type: String(type), labels: declared ?? [] });
  }
  return rows.filter((row) => row.name.startsWith('sundial_'));
}

/**
 * docs/spec.md §6.1 is the operators' list of the metrics: each the code registers is there with its
 * type and labels, and nothing else is; the README's "Metrics" names each (it left out
 * sundial_redis_writes_lost_total and the schedules-file gauges).
 */
describe('the metrics as docs/spec.md §6.1 and the README list them', () => {
  it('§6.1 has every metric the apps register, with its type and declared labels, and no other', async () => {
    const spec = new Map(specRows().map((row) => [row.name, row]));
    const code = await registered();
    expect([...spec.keys()].sort()).toEqual(code.map((row) => row.name).sort());
    for (const row of code) {
      const documented = spec.get(row.name)!;
      expect({ name: row.name, type: documented.type }).toEqual({ name: row.name, type: row.type });
      // RunCounter and RunHistogram (sundial_runs_total, the two histograms) declare none: their labels
      // are checked in a real scrape (dashboard-e2e.test.ts)
      if (row.labels.length > 0)
        expect({ name: row.name, labels: documented.labels }).toEqual({ name: row.name, labels: row.labels });
      else if (!/^sundial_(runs_total|fire_lateness_seconds|run_duration_seconds)$/.test(row.name))
        expect({ name: row.name, labels: documented.labels }).toEqual({ name: row.name, labels: [] });
    }
  });

  it("the README's Metrics section names each", () => {
    const section = repoFile('README.md').split('\n### Metrics\n')[1]!.split('\n### ')[0]!;
    const missing = specRows()
      .map((row) => row.name)
      .filter((name) => !new RegExp(`\\b${name}\\b`).test(section));
    expect(missing).toEqual([]);
  });
});
