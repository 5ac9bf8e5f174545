import { silentLogger } from '@sundial/core';
import { Registry } from 'prom-client';
import { SundialMetrics } from '../metrics/sundial-metrics';
import { RunReports, UNKNOWN_HANDLER_LABEL } from './run-reports';

const fields = (handler: string) => ({ key: 'k', id: '1p0', version: 1, partition: 0, handler });

describe('RunReports: run metrics labels', () => {
  it('labels runs by the worker handlers only: timers naming 500 unknown handlers add one series, not 500', async () => {
    const registry = new Registry();
    const reports = new RunReports(silentLogger, new SundialMetrics(registry), { mail: () => undefined });
    reports.ended({ outcome: 'ok' }, fields('mail'), 2, 5);
    for (let i = 0; i < 500; i++) {
      const error = { message: `No handler typo-${i}`, reason: 'unknown-handler' };
      reports.ended({ outcome: 'failed', error }, fields(`typo-${i}`), 2, 0);
    }
    // a handler named like an Object.prototype property is no handler of this worker either
    reports.ended({ outcome: 'failed', error: { message: 'x' } }, fields('toString'), 2, 0);

    const runs = (await registry.getSingleMetric('sundial_runs_total')?.get())?.values ?? [];
    expect(runs.map(({ labels, value }) => [labels.handler, labels.status, value])).toEqual([
      ['mail', 'ok', 1],
      [UNKNOWN_HANDLER_LABEL, 'failed', 501],
    ]);
    const durations = (await registry.getSingleMetric('sundial_run_duration_seconds')?.get())?.values ?? [];
    expect(new Set(durations.map(({ labels }) => labels.handler))).toEqual(
      new Set(['mail', UNKNOWN_HANDLER_LABEL]),
    );
  });
});
