import { harness, type Harness, START } from '../../../test/engine/harness';
import type { Clock } from './clock';
import { SundialError } from './errors';
import { RunTimeoutError, runTimeoutMs, withTimeout } from './run-timeout';
import type { TimerContext, TimerHandler } from './types';

const MINUTE = 60_000;

/** A handler that never ends unless its signal aborts, recording the signals it was given. */
function hanging(signals: AbortSignal[]): TimerHandler {
  return (_payload, ctx) => {
    signals.push(ctx.signal);
    return new Promise<void>(() => undefined);
  };
}

/** An engine on a virtual clock whose handler `h` is `make(clock)`: the timeout armed on that clock. */
function bounded(make: (clock: Pick<Clock, 'setTimeout' | 'clearTimeout'>) => TimerHandler): Harness {
  let handler: TimerHandler = () => undefined;
  const test = harness({ handlers: { h: (payload, ctx) => handler(payload, ctx) } });
  handler = make(test.clock);
  return test;
}

describe('withTimeout', () => {
  it("fails a run that outlives its timeout with reason 'timeout' and aborts its signal", async () => {
    const signals: AbortSignal[] = [];
    const { engine, clock, eventsOf } = bounded((on) =>
      withTimeout(hanging(signals), '30s', { name: 'stuck', clock: on }),
    );
    await engine.schedule({ key: 'k', handler: 'h', delay: '1m', removeOnComplete: false });
    await clock.advance(MINUTE + 29_999);
    expect(signals).toHaveLength(1);
    expect(signals[0].aborted).toBe(false);
    expect((await engine.get('k'))?.status).toBe('running');
    await clock.advance(1);
    expect(signals[0].aborted).toBe(true);
    expect(signals[0].reason).toBeInstanceOf(RunTimeoutError);
    const timer = await engine.get('k');
    expect(timer).toMatchObject({ status: 'failed', lastErrorAt: START + MINUTE + 30_000 });
    expect(timer?.last?.error).toEqual({
      reason: 'timeout',
      message: "The handler 'stuck' did not end within 30 s (its timeout); its signal was aborted.",
    });
    expect(eventsOf('failed')).toHaveLength(1);
  });

  it('lets a cron go on past runs that never end: each slot times out and the next one runs', async () => {
    const signals: AbortSignal[] = [];
    const { engine, clock, eventsOf } = bounded((on) => withTimeout(hanging(signals), '10s', { clock: on }));
    await engine.schedule({ key: 'c', handler: 'h', cron: '* * * * *', tz: 'UTC' });
    await clock.advance(5 * MINUTE + 10_000);
    expect(signals).toHaveLength(5);
    expect(signals.every((signal) => signal.aborted)).toBe(true);
    expect(eventsOf('failed')).toHaveLength(5);
    expect(eventsOf('skipped')).toEqual([]);
  });

  it('changes nothing for a run that ends in time, and leaves no wait armed behind it', async () => {
    const contexts: TimerContext[] = [];
    const { engine, clock, eventsOf } = bounded((on) =>
      withTimeout(
        (_payload, ctx) => {
          contexts.push(ctx);
          return new Promise<void>((resolve) => on.setTimeout(resolve, 5_000)); // virtual clock: no real time
        },
        '30s',
        { clock: on },
      ),
    );
    await engine.schedule({ key: 'k', handler: 'h', delay: '1m', payload: { n: 1 } });
    await clock.advance(MINUTE + 5_000);
    expect(eventsOf('completed')).toHaveLength(1);
    expect(clock.pendingCount()).toBe(0);
    const [ctx] = contexts;
    expect(ctx).toMatchObject({ key: 'k', due: START + MINUTE, attempt: 1, payload: { n: 1 } });
    expect(ctx.timer).toMatchObject({ key: 'k', handler: 'h' });
    expect(ctx.signal.aborted).toBe(false);
  });

  it('passes a throw and a value that is not a promise through as they are', async () => {
    const failing = withTimeout(() => Promise.reject(new Error('boom')), '1s');
    const context = { signal: new AbortController().signal } as TimerContext;
    await expect(failing(null, context)).rejects.toThrow('boom');
    expect(withTimeout(() => 7, '1s')(null, context)).toBe(7);
    expect(() =>
      withTimeout(() => {
        throw new Error('at once');
      }, '1s')(null, context),
    ).toThrow('at once');
  });

  it('forwards a cancel to the signal it gives the handler; its timeout then records nothing', async () => {
    const signals: AbortSignal[] = [];
    const { engine, clock, eventsOf } = bounded((on) => withTimeout(hanging(signals), '1h', { clock: on }));
    await engine.schedule({ key: 'k', handler: 'h', delay: 0 });
    await clock.advance(1);
    expect(await engine.cancel('k')).toBe(true);
    expect(signals[0].aborted).toBe(true);
    expect(signals[0].reason).not.toBeInstanceOf(RunTimeoutError);
    // A handler that ignores its signal is still bounded by the timeout, whose failure is the
    // cancelled run's: stale, not recorded.
    await clock.advance('2h');
    expect(eventsOf('failed')).toEqual([]);
    expect(await engine.get('k')).toBeNull();
    expect(clock.pendingCount()).toBe(0);
  });

  it('refuses a timeout that is not a positive duration up to 365 days, naming the field', () => {
    for (const bad of [0, -5, '1hr', '366d', Number.NaN]) {
      let refused: unknown;
      try {
        runTimeoutMs(bad);
      } catch (error) {
        refused = error;
      }
      expect(refused).toBeInstanceOf(SundialError);
      expect(refused).toMatchObject({ reason: 'invalid', field: 'timeout' });
    }
    expect(runTimeoutMs('1.5s')).toBe(1_500);
    expect(() => withTimeout(() => undefined, '1hr' as '1h')).toThrow(
      expect.objectContaining({ field: 'timeout', fix: 'Write timeout as "1h".' }),
    );
  });
});
