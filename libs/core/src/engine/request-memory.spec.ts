/* Engine-only cases of requestId (the virtual clock's window); the semantics shared with Redis are in test/conformance/request-ids.test.ts. */
import { harness } from '../../../../test/engine/harness';

describe('requestId on the engine', () => {
  it('forgets an id after the window: the same call then runs again', async () => {
    const { engine, clock } = harness({ requestWindowMs: 60_000 });
    const spec = { key: 'k', handler: 'work', delay: '1h' } as const;
    const first = await engine.schedule(spec, { requestId: 'w' });
    await clock.advance(59_999);
    expect(await engine.schedule(spec, { requestId: 'w' })).toEqual(first);
    await clock.advance(1);
    await expect(engine.schedule(spec, { requestId: 'w' })).rejects.toMatchObject({
      reason: 'duplicate-key',
    });
  });

  it('a retry sent while the first call is in flight gets the same answer', async () => {
    const { engine, eventsOf } = harness();
    const spec = { key: 'k', handler: 'work', delay: '1h' } as const;
    const [first, second] = await Promise.all([
      engine.schedule(spec, { requestId: 'r' }),
      engine.schedule(spec, { requestId: 'r' }),
    ]);
    expect(second).toEqual(first);
    expect(eventsOf('scheduled')).toHaveLength(1);
  });
});
