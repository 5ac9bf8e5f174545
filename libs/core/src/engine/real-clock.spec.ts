import type { Clock } from '../clock';
import type { TimerEvent } from '../types';
import { createEngine } from './engine';
import { harness, START } from '../../../../test/engine/harness';

describe('the engine on the real clock', () => {
  it('is the default, and runs a short timer for real', async () => {
    const ran: number[] = [];
    const engine = createEngine({ handlers: { tick: () => void ran.push(Date.now()) } });
    const completed = new Promise<TimerEvent>((resolve) => engine.on('completed', resolve));
    const { dueAt } = await engine.schedule({ key: 'real', handler: 'tick', delay: 20 });
    const event = await completed;
    expect(event).toMatchObject({ key: 'real', due: dueAt });
    expect(ran).toHaveLength(1);
    expect(ran[0]).toBeGreaterThanOrEqual(dueAt);
    await engine.dispose();
  });
});

describe('a time source that wakes early', () => {
  it('never runs a timer before its due time: it waits again', async () => {
    // like Node's timers, a millisecond early now and then
    const early = (clock: Clock): Clock => ({
      now: () => clock.now(),
      setTimeout: (fn, ms) => clock.setTimeout(fn, ms > 1 ? ms - 1 : ms),
      clearTimeout: (handle) => clock.clearTimeout(handle),
    });
    const { engine, clock, runs } = harness({ source: early });
    await engine.schedule({ key: 'k', handler: 'work', delay: 100 });
    await clock.advance(99);
    expect(runs).toEqual([]);
    expect(clock.pendingCount()).toBe(1);
    await clock.advance(1);
    expect(runs).toEqual([expect.objectContaining({ due: START + 100, at: START + 100 })]);
  });
});
