/*
 * dispose() with a shutdown grace (docs/spec.md §5.1a): what the memory backend's app.close() does, as
 * a worker's close does on Redis — running handlers may end on their own within the grace, no run
 * starts meanwhile, and the ones still going after it are aborted. Time is the engine's VirtualClock.
 */
import type { TimerContext } from '../types';
import { VirtualClock } from '../virtual-clock';
import { createEngine } from './engine';

function slowEngine(shutdownGraceMs?: number) {
  const clock = new VirtualClock(0);
  const started: TimerContext[] = [];
  let release = (): void => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  const aborted = (signal: AbortSignal) =>
    new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
  const engine = createEngine({
    clock,
    shutdownGraceMs,
    handlers: {
      slow: async (_payload, ctx) => {
        started.push(ctx);
        await Promise.race([released, aborted(ctx.signal)]);
      },
    },
  });
  const ended: string[] = [];
  engine.on('completed', (event) => ended.push(`completed ${event.key}`));
  engine.on('cancelled', (event) => ended.push(`${event.reason} ${event.key}`));
  return { clock, engine, started, release, ended };
}

describe('engine dispose with a shutdown grace', () => {
  it('lets a running handler end on its own, starting no run meanwhile, then cancels the rest', async () => {
    const { clock, engine, started, release, ended } = slowEngine(1_000);
    await engine.schedule({ key: 'a', handler: 'slow', delay: 10 });
    await engine.schedule({ key: 'b', handler: 'slow', delay: 500 });
    await clock.advance(10);
    let closed = false;
    const closing = engine.dispose().then(() => (closed = true));
    await clock.advance(600); // b falls due within the grace: it does not start
    expect(started.map((ctx) => ctx.key)).toEqual(['a']);
    expect([closed, started[0].signal.aborted]).toEqual([false, false]);
    expect(await engine.get('a')).toMatchObject({ status: 'running' });
    release();
    await closing;
    expect(started[0].signal.aborted).toBe(false);
    expect(ended).toEqual(['completed a', 'disposed b']);
    await expect(engine.get('a')).rejects.toMatchObject({ reason: 'disposed' });
  });

  it('aborts the handlers still going when the grace ends, not before', async () => {
    const { clock, engine, started } = slowEngine(1_000);
    await engine.schedule({ key: 'a', handler: 'slow', delay: 10 });
    await clock.advance(10);
    let closed = false;
    const closing = engine.dispose().then(() => (closed = true));
    expect(engine.dispose()).toBe(engine.dispose()); // one shutdown, however often asked
    await clock.advance(999);
    expect([closed, started[0].signal.aborted]).toEqual([false, false]);
    await clock.advance(1);
    await closing;
    expect(started[0].signal.aborted).toBe(true);
  });

  it('without a grace (the default) aborts at once; a bad grace is refused', async () => {
    const { clock, engine, started } = slowEngine();
    await engine.schedule({ key: 'a', handler: 'slow', delay: 10 });
    await clock.advance(10);
    await engine.dispose();
    expect(started[0].signal.aborted).toBe(true);
    expect(() => createEngine({ handlers: {}, shutdownGraceMs: -1 })).toThrow(
      expect.objectContaining({ reason: 'invalid', field: 'shutdownGraceMs' }),
    );
  });
});
