/*
 * docs/spec.md §3.3c/§3.4 on the engine's virtual clock: a periodic timer's time bounds hold across pause
 * and resume — no slot after endAt, whatever was paused meanwhile. Both backends: test/conformance/
 * reschedule-pause.test.ts.
 */
import { harness, START } from '../../../../test/engine/harness';
import type { TimerSpec } from '../types';

const HOUR = 3_600_000;

const SCHEDULES: Array<[string, Partial<TimerSpec>]> = [
  ['interval', { every: '1h' }],
  ['cron', { cron: '0 * * * *', tz: 'UTC' }],
];

describe.each(SCHEDULES)('%s paused across its endAt', (_kind, schedule) => {
  const endAt = START + 3 * HOUR;
  const spec = { key: 'k', handler: 'work', ...schedule, endAt } as TimerSpec;

  it('ends on resume, completed with reason ended, and runs no slot after endAt', async () => {
    const { engine, clock, runs, eventsOf } = harness();
    await engine.schedule({ ...spec, removeOnComplete: false });
    await clock.advance(1.5 * HOUR);
    await engine.pause('k');
    await clock.advance(4 * HOUR);
    const resumed = await engine.resume('k');
    expect(resumed).toMatchObject({ status: 'completed' });
    await clock.advance(5 * HOUR);
    expect(runs.map((run) => run.due)).toEqual([START + HOUR]);
    expect(eventsOf('scheduled').filter((event) => event.reason === 'resume')).toEqual([]);
    expect(eventsOf('completed').at(-1)).toMatchObject({ reason: 'ended' });
    expect(await engine.get('k')).toMatchObject({ status: 'completed' });
    expect(await engine.next('k')).toEqual([]);
    expect((await engine.history('k'))[0]).toMatchObject({ event: 'completed', reason: 'ended' });
  });

  it('a resume before endAt goes on to the next slot as before', async () => {
    const { engine, clock, runs } = harness();
    await engine.schedule(spec);
    await clock.advance(0.5 * HOUR);
    await engine.pause('k');
    await clock.advance(1.75 * HOUR);
    expect(await engine.resume('k')).toMatchObject({ status: 'pending', dueAt: START + 3 * HOUR });
    await clock.advance(5 * HOUR);
    expect(runs.map((run) => run.due)).toEqual([START + 3 * HOUR]);
  });
});

it('a cron paused by its failures across its endAt ends failed on resume, and is removed by default', async () => {
  const { engine, clock, runs, eventsOf } = harness();
  await engine.schedule({
    key: 'k',
    handler: 'work',
    cron: '0 * * * *',
    tz: 'UTC',
    endAt: START + 3 * HOUR,
    payload: { fail: 'boom' },
    pauseAfterFailures: 1,
  });
  await clock.advance(1.5 * HOUR);
  expect(await engine.get('k')).toMatchObject({ status: 'paused', last: { status: 'failed' } });
  await clock.advance(4 * HOUR);
  expect(await engine.resume('k')).toMatchObject({ status: 'failed' });
  await clock.advance(5 * HOUR);
  expect(runs).toHaveLength(1);
  expect(eventsOf('failed').at(-1)).toMatchObject({ reason: 'ended' });
  expect(await engine.get('k')).toBeNull();
});
