/* Engine-only cases (virtual-clock precision, in-process handlers, dispose); the SPEC §3 semantics shared with Redis are in test/conformance. */
import { harness, START } from '../../../../test/engine/harness';

const SECOND = 1_000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

describe('intervals', () => {
  it('makes nothing up after a long stall: one late run, then back on the grid', async () => {
    const { engine, clock, runs } = harness();
    await engine.schedule({
      key: 'hourly',
      handler: 'work',
      every: '1h',
      payload: { sleepMs: 5 * HOUR + 10 * MINUTE },
    });
    await clock.advance('7h');
    expect(runs.map((run) => (run.due - START) / HOUR)).toEqual([1, 7]);
  });
});

describe('cron', () => {
  it('counts every slot a long run covered, and picks up at the next one', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    await engine.schedule({
      key: 'm',
      handler: 'work',
      cron: '*/5 * * * *',
      tz: 'UTC',
      payload: { sleepMs: 21 * MINUTE },
    });
    await clock.advance('30m');
    expect(eventsOf('skipped')).toEqual([
      expect.objectContaining({
        reason: 'overlap',
        due: START + 10 * MINUTE,
        count: 4,
        at: START + 26 * MINUTE,
      }),
    ]);
    expect(runs.map((run) => (run.due - START) / MINUTE)).toEqual([5, 30]);
  });
});
