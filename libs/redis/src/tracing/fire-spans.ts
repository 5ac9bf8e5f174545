import {
  type Attributes,
  type Context,
  context,
  type Link,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
  type Tracer,
} from '@opentelemetry/api';
import type { ClaimTimes } from '../fire/run-timing';
import type { Completion, DueTimers } from '../store/fire-commands';
import type { StaleReason } from '../store/replies';
import type { RowFields } from '../store/row';
import { contextOf, traceParentOf } from './trace-parent';

/**
 * Spans of the fire path (docs/design.md "Tracing"). Only timers whose row records a trace (`tp`) get
 * any: with tracing off no row has one, so none of this runs per timer.
 *
 * The tracer is the global provider's, asked for at each span: a tracer kept from module load stays bound to the
 * provider it first reached (the API's proxy caches it), so once the host app replaced its provider —
 * `trace.disable()` and a new SDK, as its tests or a hot reload do — Sundial's spans went to the old one
 * and were lost. Only traced timers pay for the lookup (the SDK caches its tracers by name).
 */
function tracer(): Tracer {
  return trace.getTracer('@sundial/redis');
}

/** Where a timer's spans hang, from the traceparent its row recorded. */
interface Placement {
  parent: Context;
  links?: Link[];
}

/**
 * A one-shot timer's run continues the request that scheduled it: its spans are children of the
 * scheduling span, one trace from `schedule()` to the handler's own spans (as a BullMQ job's `process`
 * span is a child of its `add`, and a Temporal workflow run of the call that started it). A periodic
 * timer runs for months: each run is a trace of its own, linked to the scheduling span, so no trace
 * grows without end. Undefined when the stored text is not a traceparent.
 */
function placement(traceParent: string, kind: string | undefined): Placement | undefined {
  const scheduled = contextOf(traceParent);
  if (!scheduled) return undefined;
  if (kind === 'once') return { parent: scheduled };
  return { parent: ROOT_CONTEXT, links: [{ context: trace.getSpanContext(scheduled)! }] };
}

function timerAttributes(key: string, id: string, version: number, due: number): Attributes {
  return { 'sundial.key': key, 'sundial.id': id, 'sundial.version': version, 'sundial.due': due };
}

/**
 * The dispatcher's spans of one take: one `sundial.dispatch` (producer) per traced timer, from the take
 * to its job's `addBulk`. Each timer's ref in the job carries its span's traceparent (`tp`), so the
 * worker's run span is its child — also when the sampler dropped the dispatch (flags 00): the run
 * follows that decision rather than start a trace of its own without it.
 */
export class DispatchSpans {
  private constructor(private readonly spans: Span[]) {}

  static start(taken: DueTimers, queueName: string): DispatchSpans | undefined {
    const { job } = taken;
    if (!job || taken.traced.length === 0) return undefined;
    const byKey = new Map(taken.traced.map((timer) => [timer.key, timer]));
    const spans: Span[] = [];
    for (const ref of job.timers) {
      const traced = byKey.get(ref.key);
      const where = traced && placement(traced.traceParent, traced.kind);
      if (!where) continue;
      const span = tracer().startSpan(
        'sundial.dispatch',
        {
          kind: SpanKind.PRODUCER,
          links: where.links,
          attributes: {
            ...timerAttributes(ref.key, ref.id, ref.version, ref.due),
            'sundial.job_id': job.jobId,
            'sundial.lead_ms': ref.due - taken.now,
            'messaging.system': 'bullmq',
            'messaging.destination.name': queueName,
          },
        },
        where.parent,
      );
      const traceParent = traceParentOf(span.spanContext());
      if (traceParent) ref.tp = traceParent;
      spans.push(span);
    }
    return new DispatchSpans(spans);
  }

  /** After the jobs' `addBulk`: ok, or the error that left the timers armed without a job. */
  end(error?: Error): void {
    for (const span of this.spans) {
      if (error) span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
      span.end();
    }
  }
}

/**
 * What a run ended with: its outcome (and the stack of what its handler threw, if any), or null when it
 * was handed back at shutdown.
 */
export type RunEnd = (Pick<Completion, 'outcome' | 'error'> & { stack?: string }) | null;

/**
 * A traced run's `sundial.run` span (consumer), from its claim to its handler's end, with a
 * `sundial.claim` child for the claim's round trip (sent to answered: a claim made ahead then waits
 * for its due in the run span, not in the claim's). The handler runs inside it (`inRunContext`), so its
 * own spans and outgoing calls join the trace.
 */
export class RunSpan {
  private constructor(
    private readonly span: Span,
    /** the run span's context, the handler's (inRunContext) */
    readonly context: Context,
  ) {}

  /**
   * The span of a claimed run, or undefined when untraced: a child of the dispatcher's span (`jobTrace`,
   * from the fire job, sampled or not), or — a job added by a dispatcher with tracing off — placed by
   * the row's own `tp`.
   */
  static start(
    fields: RowFields,
    due: number,
    jobTrace: string | undefined,
    claim: Pick<ClaimTimes, 'claimSentAt' | 'claimAnsweredAt'>,
    latenessMs: number,
  ): RunSpan | undefined {
    const traceParent = jobTrace ?? fields.tp;
    if (traceParent === undefined) return undefined;
    const where = jobTrace ? placement(jobTrace, 'once') : placement(traceParent, fields.k);
    if (!where) return undefined;
    const span = tracer().startSpan(
      'sundial.run',
      {
        kind: SpanKind.CONSUMER,
        startTime: claim.claimSentAt,
        links: where.links,
        attributes: {
          ...timerAttributes(fields.key, fields.id, Number(fields.rv), due),
          'sundial.handler': fields.h,
          'sundial.kind': fields.k,
          'sundial.run_count': Number(fields.rc),
          'sundial.lateness_ms': latenessMs,
        },
      },
      where.parent,
    );
    const runContext = trace.setSpan(where.parent, span);
    tracer()
      .startSpan('sundial.claim', { startTime: claim.claimSentAt }, runContext)
      .end(claim.claimAnsweredAt);
    return new RunSpan(span, runContext);
  }

  /**
   * Ends the span (at `endTime`, the handler's end, when given) with what the run's completion recorded:
   * its outcome, or — `stale`, the timer cancelled, replaced or its lease lost while it ran — nothing,
   * as its ledger says (a `stale` entry, no `failed`): outcome `stale` with `sundial.stale_reason` and no
   * error status, whatever the handler did (an aborted one threw its signal's AbortError). A failure is
   * also an `exception` event (its message, and the stack the handler threw), as OpenTelemetry's
   * conventions record an error and trace views show a stack from.
   */
  end(ended: RunEnd, stale?: StaleReason, endTime?: number): void {
    if (stale) {
      this.span.setAttributes({ 'sundial.outcome': 'stale', 'sundial.stale_reason': stale });
    } else {
      this.span.setAttribute('sundial.outcome', ended?.outcome ?? 'handed-back');
      if (ended?.error) {
        this.span.recordException({ message: ended.error.message, stack: ended.stack }, endTime);
        this.span.setStatus({ code: SpanStatusCode.ERROR, message: ended.error.message });
        if (ended.error.reason) this.span.setAttribute('sundial.error.reason', ended.error.reason);
      }
    }
    this.span.end(endTime);
  }
}

/**
 * Calls a run's handler in its run span's context, or — an untraced run — outside any span (the root
 * context), not in whatever context the BullMQ worker's loop was started in: an app that started its
 * worker inside a span (an admin request calling `SundialWorker.start()`, an `app.init()` within a
 * serverless invocation's span) had every untraced run in that long-ended span's trace, and each timer
 * such a handler scheduled stamped with it (docs/spec.md §6.4: scheduled outside any span, it runs
 * untraced).
 */
export function inRunContext<T>(span: RunSpan | undefined, handler: () => T): T {
  if (span) return context.with(span.context, handler);
  // Outside any context already (the usual case): a plain call. A switch costs ~1 µs with the
  // AsyncLocalStorage context manager an SDK registers (docs/design.md "Tracing").
  return context.active() === ROOT_CONTEXT ? handler() : context.with(ROOT_CONTEXT, handler);
}
