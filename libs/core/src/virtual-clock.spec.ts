import { SundialError } from './errors';
import { VirtualClock } from './virtual-clock';

describe('VirtualClock', () => {
  it('starts at the given time and moves only when advanced', async () => {
    const clock = new VirtualClock(1_000);
    expect(clock.now()).toBe(1_000);
    await clock.advance('1.5s');
    expect(clock.now()).toBe(2_500);
    await clock.advance(0);
    expect(clock.now()).toBe(2_500);
  });

  it('runs due timers in due order, each at its due time, and leaves later ones armed', async () => {
    const clock = new VirtualClock(0);
    const seen: [string, number][] = [];
    clock.setTimeout(() => seen.push(['c', clock.now()]), 300);
    clock.setTimeout(() => seen.push(['a', clock.now()]), 100);
    clock.setTimeout(() => seen.push(['b', clock.now()]), 200);
    clock.setTimeout(() => seen.push(['late', clock.now()]), 1_000);
    await clock.advance(500);
    expect(seen).toEqual([
      ['a', 100],
      ['b', 200],
      ['c', 300],
    ]);
    expect(clock.now()).toBe(500);
    expect(clock.pendingCount()).toBe(1);
  });

  it('breaks ties between equal due times by arming order', async () => {
    const clock = new VirtualClock(0);
    const seen: string[] = [];
    for (const name of ['x', 'y', 'z']) clock.setTimeout(() => seen.push(name), 50);
    await clock.advance(50);
    expect(seen).toEqual(['x', 'y', 'z']);
  });

  it('runs a timer armed during a tick in a later tick, even when it is due at once', async () => {
    const clock = new VirtualClock(0);
    const seen: string[] = [];
    clock.setTimeout(() => {
      seen.push('first');
      clock.setTimeout(() => seen.push('armed-during-tick'), 0);
    }, 10);
    clock.setTimeout(() => seen.push('same-tick'), 10);
    await clock.advance(10);
    expect(seen).toEqual(['first', 'same-tick', 'armed-during-tick']);
  });

  it('does not run a timer cleared by an earlier callback of the same tick', async () => {
    const clock = new VirtualClock(0);
    const seen: string[] = [];
    const victim: { handle?: object } = {};
    clock.setTimeout(() => {
      seen.push('clearer');
      if (victim.handle) clock.clearTimeout(victim.handle);
    }, 7);
    victim.handle = clock.setTimeout(() => seen.push('victim'), 7);
    clock.setTimeout(() => seen.push('bystander'), 7);
    await clock.advance(7);
    expect(seen).toEqual(['clearer', 'bystander']);
    expect(clock.pendingCount()).toBe(0);
  });

  it('settles promise chains started by a callback before the next tick', async () => {
    const clock = new VirtualClock(0);
    const seen: string[] = [];
    clock.setTimeout(async () => {
      for (let i = 0; i < 20; i++) await Promise.resolve();
      seen.push(`settled at ${clock.now()}`);
      clock.setTimeout(() => seen.push(`follow-up at ${clock.now()}`), 0);
    }, 100);
    clock.setTimeout(() => seen.push(`next tick at ${clock.now()}`), 101);
    await clock.advance(200);
    expect(seen).toEqual(['settled at 100', 'follow-up at 100', 'next tick at 101']);
  });

  it('lets a callback wait on a later virtual timer without blocking the advance', async () => {
    const clock = new VirtualClock(0);
    const virtualPause = (ms: number) => new Promise<void>((resolve) => clock.setTimeout(resolve, ms));
    const seen: number[] = [];
    clock.setTimeout(async () => {
      await virtualPause(1_000);
      seen.push(clock.now());
    }, 500);
    await clock.advance(2_000);
    expect(seen).toEqual([1_500]);
  });

  it('runs concurrent advances one after the other', async () => {
    const clock = new VirtualClock(0);
    const seen: number[] = [];
    clock.setTimeout(() => seen.push(clock.now()), 150);
    await Promise.all([clock.advance(100), clock.advance(100)]);
    expect(seen).toEqual([150]);
    expect(clock.now()).toBe(200);
  });

  it('rejects the advance with a callback’s error, and keeps working afterwards', async () => {
    const clock = new VirtualClock(0);
    const seen: number[] = [];
    clock.setTimeout(() => {
      throw new Error('callback bug');
    }, 10);
    clock.setTimeout(() => seen.push(clock.now()), 20);
    await expect(clock.advance(100)).rejects.toThrow('callback bug');
    expect(clock.now()).toBe(10);
    await clock.advance(100);
    expect(seen).toEqual([20]);
  });

  it('fails loudly instead of hanging when timers re-arm each other at zero delay forever', async () => {
    const clock = new VirtualClock(0);
    const loop = () => void clock.setTimeout(loop, 0);
    loop();
    await expect(clock.advance(1)).rejects.toThrow(/re-arming at 0/);
  });

  it('refuses a negative or malformed advance and does not move', async () => {
    const clock = new VirtualClock(0);
    await expect(clock.advance(-1)).rejects.toMatchObject({ reason: 'invalid', field: 'advance' });
    await expect(clock.advance('1hr' as '1h')).rejects.toBeInstanceOf(SundialError);
    expect(clock.now()).toBe(0);
  });
});
