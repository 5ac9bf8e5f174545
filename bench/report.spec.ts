import { atMost, atMostTimesBullmq, renderTable, row, timesBullmq } from './report';

describe('bench report', () => {
  it('checks a target against the Sundial value', () => {
    expect(row('s', 'p99 (ms)', { sundial: 9, bullmq: 30 }, atMost(10, 'ms')).met).toBe(true);
    expect(row('s', 'p99 (ms)', { sundial: 11, bullmq: 3 }, atMost(10, 'ms')).met).toBe(false);
  });

  it('checks a ratio target against BullMQ, and fails it when BullMQ was not measured', () => {
    expect(row('s', 'runs/s', { sundial: 150, bullmq: 100 }, timesBullmq(1.5)).met).toBe(true);
    expect(row('s', 'runs/s', { sundial: 149, bullmq: 100 }, timesBullmq(1.5)).met).toBe(false);
    expect(row('s', 'runs/s', { sundial: 149 }, timesBullmq(1.5)).met).toBe(false);
    expect(row('s', 'p99 (ms)', { sundial: 2, bullmq: 10 }, atMostTimesBullmq(0.2)).met).toBe(true);
    expect(row('s', 'p99 (ms)', { sundial: 2.1, bullmq: 10 }, atMostTimesBullmq(0.2)).met).toBe(false);
    expect(row('s', 'p99 (ms)', { sundial: 1 }, atMostTimesBullmq(0.2)).met).toBe(false);
    expect(atMostTimesBullmq(0.05, '≤ 5 ms idle').text).toBe('≤ 0.05× BullMQ (≤ 5 ms idle)');
  });

  it('leaves met empty without a target, without a Sundial value, or when a note says it does not apply', () => {
    expect(row('s', 'commands', { sundial: 3, bullmq: 4 }).met).toBeNull();
    expect(row('s', 'ms', { bullmq: 4 }, atMost(2_000, 'ms')).met).toBeNull();
    expect(row('s', 'ms', { sundial: 1 }, atMost(2_000, 'ms'), 'n/a: quick').met).toBeNull();
  });

  it('renders one Markdown row per measurement with the Sundial/BullMQ ratio', () => {
    const table = renderTable([
      row('6. cancelAll', 'ms', { sundial: 1_500, bullmq: 500 }, atMost(2_000, 'ms')),
      row('7. commands', 'commands', { sundial: 12.5 }),
    ]);
    const lines = table.split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[2]).toBe('| 6. cancelAll | ms | 1,500 | 500 | 3.00× | ≤ 2,000 ms | yes |');
    expect(lines[3]).toBe('| 7. commands | commands | 12.5 | — | — |  |  |');
  });
});
