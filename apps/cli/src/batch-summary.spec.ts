import type { Timer } from '@sundial/core';
import { batchSummary } from './batch-summary';

const timer = (key: string, id: string, status: Timer['status'] = 'pending') =>
  ({ key, id, status }) as Timer;

describe('the line under a batch schedule’s table', () => {
  it('counts the timers', () => {
    expect(batchSummary([timer('a', '1p0'), timer('b', '2p0')])).toBe('2 timer(s) scheduled');
  });

  // A key named again with --if-exists replace: the first timer is answered cancelled (docs/spec.md §3.1);
  // the line said "2 timer(s) scheduled" and nothing of the one the batch itself replaced.
  it('says how many of them a later spec of the batch replaced', () => {
    const items = [timer('a', '1p0', 'cancelled'), timer('b', '2p0'), timer('a', '3p0')];
    expect(batchSummary(items)).toBe(
      '3 timer(s) scheduled, 1 of them replaced by a later spec of this batch (cancelled)',
    );
  });
});
