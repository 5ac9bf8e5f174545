import {
  type Context,
  isSpanContextValid,
  ROOT_CONTEXT,
  type SpanContext,
  trace,
  TraceFlags,
} from '@opentelemetry/api';
import type { RowFields } from '../store/row';

/** W3C `traceparent`, version 00: trace id, parent span id, flags. */
const TRACE_PARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

function sampled(spanContext: SpanContext): boolean {
  return (spanContext.traceFlags & TraceFlags.SAMPLED) !== 0;
}

/**
 * The W3C `traceparent` of a span context, sampled or not (its flags say which), or undefined when it
 * is not valid.
 */
export function traceParentOf(spanContext: SpanContext): string | undefined {
  if (!isSpanContextValid(spanContext)) return undefined;
  return `00-${spanContext.traceId}-${spanContext.spanId}-${sampled(spanContext) ? '01' : '00'}`;
}

/** A context whose (remote) parent span is `traceParent`, or undefined when the text is not one. */
export function contextOf(traceParent: string): Context | undefined {
  const match = TRACE_PARENT.exec(traceParent);
  if (!match) return undefined;
  const spanContext: SpanContext = {
    traceId: match[1],
    spanId: match[2],
    traceFlags: parseInt(match[3], 16),
    isRemote: true,
  };
  return isSpanContextValid(spanContext) ? trace.setSpanContext(ROOT_CONTEXT, spanContext) : undefined;
}

/**
 * Records the caller's trace on the rows of a schedule call (row field `tp`, docs/design.md
 * "Tracing"): the `traceparent` of the span active now, if there is one and it is sampled. With
 * tracing off there is no active span, so a row gets no field and keeps its size; the check is one
 * `getActiveSpan()` per call.
 */
export function stampTraceParent(rows: RowFields[]): void {
  const spanContext = trace.getActiveSpan()?.spanContext();
  const traceParent = spanContext && sampled(spanContext) && traceParentOf(spanContext);
  if (traceParent) for (const row of rows) row.tp = traceParent;
}
