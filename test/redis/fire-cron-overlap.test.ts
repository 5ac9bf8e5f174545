import { cronFollowUp } from '@sundial/redis';
import { waitFor } from '../support/wait-for';
import { eventually, useFirePath } from './fire-fixture';

const fire = useFirePath();

/* Interval and cron semantics run on both backends in test/conformance; this is the Redis-only cron path. */
describe('fire path: cron', () => {
  it('reports the slots a run overlapped as skipped', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({ key: 'c', handler: 'h', cron: '* * * * * *', tz: 'UTC' });
    await waitFor(async () => (await cluster.redisNow()) >= timer.dueAt, { intervalMs: 5, what: 'due' });
    const [claim] = await cluster.commands.claim(0, 30_000, 'w', [
      { id: timer.id, key: 'c', version: 1, due: timer.dueAt },
    ]);
    expect(claim.kind).toBe('claimed');
    const started = timer.dueAt;
    // As if the run had lasted 3.5 s: the slots at +1 s, +2 s and +3 s passed while it ran.
    const followUp = cronFollowUp({ k: 'cron', cr: '* * * * * *', tz: 'UTC' }, started, started + 3500);
    expect(followUp).toEqual({ cronNext: started + 4000, skipped: 3 });
    const [result] = await cluster.commands.complete(0, [
      { id: timer.id, key: 'c', version: 1, runCount: 1, mode: 'held', outcome: 'ok', ...followUp },
    ]);
    expect(result).toBe('done');
    expect(await eventually(cluster.events, { type: 'skipped', key: 'c' })).toMatchObject({
      reason: 'overlap',
      count: 3,
    });
    expect(await cluster.timers.get('c')).toMatchObject({
      status: 'pending',
      version: 2,
      dueAt: started + 4000,
    });
  });
});
