import { harness, START } from '../../../../test/engine/harness';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe('a fortnight on the virtual clock', () => {
  it('runs a 2-day reminder, a 14-day expiry and an hourly heartbeat at their due times', async () => {
    const { engine, clock, runs } = harness({
      handlers: {
        // the expiry ends the approval: the reminders stop with it
        expire: async () => void (await engine.cancel('doc:remind')),
      },
    });
    const expired: number[] = [];
    engine.on('completed', (event) => event.key === 'doc:expires' && expired.push(event.at));
    const startWorkflow = async () => {
      await engine.schedule({ key: 'doc:expires', handler: 'expire', delay: '14d', ifExists: 'keep' });
      await engine.schedule({ key: 'doc:remind', handler: 'work', every: '2d', ifExists: 'keep' });
      await engine.schedule({ key: 'heartbeat', handler: 'work', every: '1h', ifExists: 'keep' });
    };
    await startWorkflow();
    await clock.advance('7d');
    // a restart re-runs the code from the top: the first call named the times, nothing moves
    await startWorkflow();
    await clock.advance('7d');

    const reminders = runs.filter((run) => run.key === 'doc:remind');
    expect(reminders.map((run) => (run.due - START) / DAY)).toEqual([2, 4, 6, 8, 10, 12]);
    expect(expired).toEqual([START + 14 * DAY]);
    const beats = runs.filter((run) => run.key === 'heartbeat');
    expect(beats).toHaveLength(14 * 24);
    expect(beats.every((run, i) => run.due === START + (i + 1) * HOUR && run.at === run.due)).toBe(true);
    expect(await engine.get('doc:remind')).toBeNull();
    expect(await engine.get('doc:expires')).toBeNull();

    await clock.advance('2d');
    expect(runs.filter((run) => run.key === 'doc:remind')).toHaveLength(6);
    expect(runs.filter((run) => run.key === 'heartbeat')).toHaveLength(16 * 24);
  });
});
