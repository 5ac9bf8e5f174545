import type { FireCommands, TimerRef } from '@sundial/redis';
import { refOf, useFirePath } from './fire-fixture';

type Completion = Parameters<FireCommands['complete']>[1][number];

const fire = useFirePath();

/** A held run's completion, ended ok (a one-shot's: complete.lua's one-shot HMGET). */
function okOf(ref: TimerRef, runCount: number, once: boolean): Completion {
  return { ...ref, runCount, mode: 'held', outcome: 'ok', missed: 0, overlap: 0, once };
}

/**
 * A held run is known by its runCount: claim.lua stores it as `hc` (and the run's version as `rv`) only for
 * a timer that does not await its task, whose free runs move `rc` while the held run goes on; a timer that
 * awaits its task has no free runs, so its `rc` is the held run's and neither field is written.
 */
describe("a held run's runCount (claim.lua `hc`, `rv`)", () => {
  it('a timer that awaits its task stores neither: renewal and completion know the run by rc', async () => {
    const cluster = await fire.cluster();
    const ref = refOf(await cluster.timers.schedule({ key: 'await', handler: 'h', delay: 0 }));
    const row = cluster.timers.keys.row('await');
    await cluster.commands.claim(0, 30_000, 'w1', [ref]);
    expect(await fire.raw.hmget(row, 'hc', 'rv', 'rc', 's')).toEqual([null, null, '1', 'running']);
    expect(await cluster.commands.renewLeases(0, 30_000, 'w1', [{ key: 'await', runCount: 1 }])).toEqual([
      'held',
    ]);
    // its lease ends unrenewed: another worker claims the run again (runCount 2), and the first is stale
    await fire.raw.hset(row, 'lu', '1');
    const [again] = await cluster.commands.claim(0, 30_000, 'w2', [ref]);
    expect(again).toMatchObject({ kind: 'claimed', mode: 'held', fields: { rc: '2', hc: '2' } });
    expect(await fire.raw.hmget(row, 'hc', 'rv')).toEqual([null, null]);
    expect(await cluster.commands.renewLeases(0, 30_000, 'w1', [{ key: 'await', runCount: 1 }])).toEqual([
      'lost',
    ]);
    const [first, second] = await cluster.commands.complete(0, [okOf(ref, 1, true), okOf(ref, 2, true)]);
    expect(first).toEqual({ kind: 'stale', reason: 'status' });
    expect(second).toEqual({ kind: 'done', missed: 0, overlap: 0 });
    expect(await fire.raw.exists(row)).toBe(0);
  });

  it('a run of a timer that does not await its task held by claim stores both', async () => {
    const cluster = await fire.cluster();
    await cluster.timers.schedule({ key: 'free', handler: 'h', every: 60_000, awaitTask: false });
    // a trigger run is held, not free
    const triggered = await cluster.timers.trigger('free');
    await cluster.commands.claim(0, 30_000, 'w', [refOf(triggered)]);
    const row = cluster.timers.keys.row('free');
    expect(await fire.raw.hmget(row, 'hc', 'rv', 'rc', 's')).toEqual([
      '1',
      String(triggered.version),
      '1',
      'running',
    ]);
  });

  it('a `hc` an earlier release stored is kept true when the run is claimed again', async () => {
    const cluster = await fire.cluster();
    const timer = await cluster.timers.schedule({ key: 'old', handler: 'h', every: 60_000 });
    const row = cluster.timers.keys.row('old');
    // due now rather than in a minute
    const ref = { ...refOf(timer), due: timer.dueAt - 60_000 };
    await fire.raw.hset(row, 'd', String(ref.due));
    await cluster.commands.claim(0, 30_000, 'w1', [ref]);
    // as that release's claim left it: `hc` beside `rc`; then its lease ends
    await fire.raw.hset(row, 'hc', '1', 'rv', String(ref.version), 'lu', '1');
    await cluster.commands.claim(0, 30_000, 'w2', [ref]);
    expect(await fire.raw.hmget(row, 'hc', 'rc')).toEqual(['2', '2']);
    expect(await cluster.commands.renewLeases(0, 30_000, 'w2', [{ key: 'old', runCount: 2 }])).toEqual([
      'held',
    ]);
    const [done] = await cluster.commands.complete(0, [okOf(ref, 2, false)]);
    expect(done).toEqual({ kind: 'done', missed: 0, overlap: 0 });
    expect(await cluster.timers.get('old')).toMatchObject({ status: 'pending', runCount: 2, version: 2 });
  });
});
