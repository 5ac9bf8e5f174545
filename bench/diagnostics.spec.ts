import { type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import { gcKind } from './diagnostics';
import { collectGarbage } from './scenarios/harness';

describe('bench GC diagnostics', () => {
  it('collectGarbage runs a full collection, which PerformanceObserver reports as a mark-compact', async () => {
    const seen: PerformanceEntry[] = [];
    const observer = new PerformanceObserver((list) => seen.push(...list.getEntries()));
    observer.observe({ entryTypes: ['gc'] });
    collectGarbage();
    const deadline = Date.now() + 5_000;
    while (!seen.some((entry) => gcKind(entry) === 'mark-compact') && Date.now() < deadline) {
      await new Promise((resolve) => setImmediate(resolve));
    }
    seen.push(...observer.takeRecords());
    observer.disconnect();
    expect(seen.map(gcKind)).toContain('mark-compact');
  });
});
