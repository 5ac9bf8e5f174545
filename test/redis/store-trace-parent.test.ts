import { context, ROOT_CONTEXT, type SpanContext, trace, TraceFlags } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { FireCommands, type RedisTimers } from '@sundial/redis';
import { useStore } from './store-fixture';

const store = useStore();

const caller: SpanContext = {
  traceId: '0af7651916cd43dd8448eb211c80319c',
  spanId: 'b7ad6b7169203331',
  traceFlags: TraceFlags.SAMPLED,
};

function inCallerSpan<T>(spanContext: SpanContext, work: () => Promise<T>): Promise<T> {
  return context.with(trace.setSpanContext(ROOT_CONTEXT, spanContext), work);
}

async function rowOf(timers: RedisTimers, key: string): Promise<Record<string, string>> {
  return store.raw.hgetall(`${timers.keys.base(0)}t:${key}`);
}

/** The caller's trace on the row (docs/design.md "Tracing"): field `tp`, only when a trace is active. */
describe('RedisTimers.schedule and the caller’s traceparent', () => {
  it('writes no trace field with tracing off (no context manager: nothing is ever active)', async () => {
    const timers = store.open();
    await inCallerSpan(caller, () => timers.schedule({ key: 'off', handler: 'h', delay: '1h' }));
    // k once, s pending and v 1 are defaults, left out (docs/design.md "Row values")
    expect(Object.keys(await rowOf(timers, 'off')).sort()).toEqual(['d', 'dm', 'h', 'id', 'sa']);
  });

  describe('with a context manager (tracing on)', () => {
    beforeAll(() => context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()));
    afterAll(() => context.disable());

    it('records the active sampled span as a W3C traceparent, and nothing outside a span', async () => {
      const timers = store.open();
      await inCallerSpan(caller, () =>
        timers.scheduleMany([
          { key: 'a', handler: 'h', delay: '1h' },
          { key: 'b', handler: 'h', every: '1h' },
        ]),
      );
      await timers.schedule({ key: 'outside', handler: 'h', delay: '1h' });
      await inCallerSpan({ ...caller, traceFlags: TraceFlags.NONE }, () =>
        timers.schedule({ key: 'unsampled', handler: 'h', delay: '1h' }),
      );
      const traceParent = `00-${caller.traceId}-${caller.spanId}-01`;
      expect((await rowOf(timers, 'a')).tp).toBe(traceParent);
      expect((await rowOf(timers, 'b')).tp).toBe(traceParent);
      expect((await rowOf(timers, 'outside')).tp).toBeUndefined();
      expect((await rowOf(timers, 'unsampled')).tp).toBeUndefined();
      // the Timer read back is unchanged: the trace is the fire path's, not part of the timer
      expect(Object.keys((await timers.get('a'))!)).not.toContain('tp');
    });

    it('take-due reports the traced timers it hands over, with their kind', async () => {
      const timers = store.open();
      await inCallerSpan(caller, () => timers.schedule({ key: 'traced', handler: 'h', delay: '1s' }));
      await timers.schedule({ key: 'plain', handler: 'h', delay: '1s' });
      const taken = await new FireCommands(store.raw, timers.keys).takeDue(0, 100, 60_000);
      expect(taken.job?.timers.map((ref) => ref.key).sort()).toEqual(['plain', 'traced']);
      expect(taken.traced).toEqual([
        { key: 'traced', traceParent: `00-${caller.traceId}-${caller.spanId}-01`, kind: 'once' },
      ]);
    });
  });
});
