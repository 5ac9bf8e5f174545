import { trace, TraceFlags } from '@opentelemetry/api';
import { contextOf, traceParentOf } from './trace-parent';

const traceId = '0af7651916cd43dd8448eb211c80319c';
const spanId = 'b7ad6b7169203331';

describe('traceparent codec', () => {
  it('writes a sampled, valid span context as version 00', () => {
    expect(traceParentOf({ traceId, spanId, traceFlags: TraceFlags.SAMPLED })).toBe(
      `00-${traceId}-${spanId}-01`,
    );
  });

  it('writes an unsampled one with flags 00 (a run follows its dispatch’s decision), nothing for an invalid one', () => {
    expect(traceParentOf({ traceId, spanId, traceFlags: TraceFlags.NONE })).toBe(
      `00-${traceId}-${spanId}-00`,
    );
    expect(
      traceParentOf(trace.wrapSpanContext({ traceId: '0'.repeat(32), spanId, traceFlags: 1 }).spanContext()),
    ).toBeUndefined();
  });

  it('reads one back as a remote parent, sampled or not', () => {
    const parent = contextOf(`00-${traceId}-${spanId}-01`);
    expect(trace.getSpanContext(parent!)).toEqual({ traceId, spanId, traceFlags: 1, isRemote: true });
    const unsampled = contextOf(`00-${traceId}-${spanId}-00`);
    expect(trace.getSpanContext(unsampled!)).toEqual({ traceId, spanId, traceFlags: 0, isRemote: true });
  });

  it('reads nothing from text that is not a valid traceparent', () => {
    for (const text of [
      '',
      'garbage',
      `01-${traceId}-${spanId}-01`,
      `00-${'0'.repeat(32)}-${spanId}-01`,
      `00-${traceId}-${spanId.toUpperCase()}-01`,
    ]) {
      expect(contextOf(text)).toBeUndefined();
    }
  });
});
