import type { Timer } from '@sundial/core';
import { timerText } from './timer-text';

/** `sundial get` tells the timer's last times as the row has them (docs/spec.md §2, §5.6), as the UI does. */
describe('cli output: a timer’s last fired, completed and error times', () => {
  const at = (iso: string) => Date.parse(iso);
  const base = { key: 'k', status: 'pending', handler: 'h', runCount: 2, version: 3, id: '1p0' };

  it('a failure before a run that went well is still its last error; the last completion is shown', () => {
    const text = timerText({
      ...base,
      lastFiredAt: at('2026-12-07T10:00:00Z'),
      lastCompletedAt: at('2026-12-07T10:00:01Z'),
      lastErrorAt: at('2026-12-07T09:00:01Z'),
      last: { started: at('2026-12-07T10:00:00Z'), ended: at('2026-12-07T10:00:01Z'), status: 'ok' },
    } as Timer);
    expect(text).toMatch(/^last completed: +2026-12-07T10:00:01\.000Z$/m);
    expect(text).toMatch(/^last error: +2026-12-07T09:00:01\.000Z$/m);
  });

  it('the last run’s failure: its time and its message; none: a dash', () => {
    const failed = timerText({
      ...base,
      lastErrorAt: at('2026-12-07T10:00:01Z'),
      lastCompletedAt: null,
      last: { started: 0, ended: 1, status: 'failed', error: { message: 'boom' } },
    } as Timer);
    expect(failed).toMatch(/^last error: +2026-12-07T10:00:01\.000Z boom$/m);
    expect(failed).toMatch(/^last completed: +—$/m);
    expect(timerText({ ...base, lastErrorAt: null, last: null } as Timer)).toMatch(/^last error: +—$/m);
  });
});
