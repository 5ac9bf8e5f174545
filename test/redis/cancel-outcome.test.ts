import { type Completion, FireCommands, type RedisTimers } from '@sundial/redis';
import { claim, useStore } from './store-fixture';

const store = useStore();

/** A one-shot kept by `removeOnComplete: false` that ran once and ended `outcome`, through the real scripts. */
async function ended(timers: RedisTimers, key: string, outcome: Completion['outcome']): Promise<void> {
  const timer = await timers.schedule({ key, handler: 'h', delay: 0, removeOnComplete: false });
  await claim(store.raw, timers, timer);
  const error = outcome === 'failed' ? { error: { message: 'boom' } } : {};
  await new FireCommands(store.raw, timers.keys).complete(timers.keys.partitionOf(key), [
    { id: timer.id, key, version: 1, runCount: 1, mode: 'held', outcome, missed: 0, overlap: 0, ...error },
  ]);
  expect((await timers.get(key))?.status).toBe(outcome === 'ok' ? 'completed' : 'failed');
}

/**
 * cancel.lua told three ways (docs/spec.md §3.4): 1 for a live timer cancelled, the status of a kept
 * finished row it removed (a release before this one reads that as not 1: `false`, as it answered),
 * 0 for no row; a removal is kept for a caller's repeated request, a cancel of nothing is not.
 */
describe('cancel of a kept finished row on Redis', () => {
  it('answers the status of the row it removed, a live timer cancelled, or no row', async () => {
    const cancels: number[] = [];
    const timers = store.open({ observer: { cancelled: ({ count }) => void cancels.push(count) } });
    await ended(timers, 'done', 'ok');
    await ended(timers, 'bad', 'failed');
    await timers.schedule({ key: 'live', handler: 'h', delay: '1h' });
    expect(await timers.cancelOutcome('done')).toBe('completed');
    expect(await timers.cancelOutcome('bad')).toBe('failed');
    expect(await timers.cancelOutcome('live')).toBe('cancelled');
    expect(await timers.cancelOutcome('never')).toBeNull();
    for (const key of ['done', 'bad', 'live']) expect(await store.raw.exists(timers.keys.row(key))).toBe(0);
    // a kept row removed leaves no tombstone: nothing was cancelled, and only the live one is counted
    expect(await store.raw.exists(timers.keys.tombstone('done'), timers.keys.tombstone('bad'))).toBe(0);
    expect(cancels).toEqual([1]);
  });

  it('a repeated request answers the removal again, kept as the status text; a cancel of nothing is not kept', async () => {
    const timers = store.open();
    await ended(timers, 'done', 'ok');
    expect(await timers.cancelOutcome('done', { requestId: 'r-1' })).toBe('completed');
    const memo = `${timers.keys.base(timers.keys.partitionOf('done'))}q:r-1:c`;
    expect(await store.raw.get(memo)).toBe('"completed"');
    expect(await timers.cancelOutcome('done', { requestId: 'r-1' })).toBe('completed');
    expect(await timers.cancel('done', { requestId: 'r-1' })).toBe(false);
    // nothing under the key: no pin of the id, no kept answer; the retry cancels the timer made since
    expect(await timers.cancelOutcome('later', { requestId: 'r-2' })).toBeNull();
    expect(await store.raw.exists(`${timers.keys.prefix}:request:r-2`)).toBe(0);
    await timers.schedule({ key: 'later', handler: 'h', delay: '1h' });
    expect(await timers.cancelOutcome('later', { requestId: 'r-2' })).toBe('cancelled');
  });
});
