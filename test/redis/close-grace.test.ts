import { waitFor } from '@sundial/testing/harness';
import { delay, eventually, matching, recorder, useFirePath } from './fire-fixture';

const fire = useFirePath();

describe('fire path: graceful close', () => {
  it('finishes what ends within the grace, aborts and hands back the rest', async () => {
    const cluster = await fire.cluster();
    const quick = recorder(() => delay(50));
    const stubborn = recorder(() => new Promise(() => undefined));
    await cluster.dispatcher();
    const runner = await cluster.runner({ quick: quick.handler, stubborn: stubborn.handler });
    await cluster.timers.schedule({ key: 'quick', handler: 'quick', delay: 0 });
    await cluster.timers.schedule({ key: 'again', handler: 'stubborn', delay: 0 });
    await cluster.timers.schedule({ key: 'once', handler: 'stubborn', delay: 0, delivery: 'at-most-once' });
    await waitFor(() => quick.calls.length === 1 && stubborn.calls.length === 2, { what: 'three runs' });
    await runner.close(200);
    await eventually(cluster.events, { type: 'completed', key: 'quick' });
    expect(stubborn.calls.every((ctx) => ctx.signal.aborted)).toBe(true);
    expect(await eventually(cluster.events, { type: 'failed', key: 'once' })).toMatchObject({
      error: { reason: 'lost' },
    });
    // at-least-once: handed back, it runs again on the next worker.
    const next = recorder();
    await cluster.runner({ stubborn: next.handler });
    await eventually(cluster.events, { type: 'completed', key: 'again' });
    expect(next.calls.map((ctx) => ctx.runCount)).toEqual([2]);
    expect(matching(cluster.events, { type: 'failed', key: 'again' })).toEqual([]);
  });
});
