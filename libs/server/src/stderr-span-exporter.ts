import { type ExportResult, ExportResultCode, hrTimeToMicroseconds } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace';

/**
 * OTEL_TRACES_EXPORTER=console: each span as one JSON line on stderr. The SDK's ConsoleSpanExporter
 * prints multi-line objects on stdout, between the JSON log lines a log collector parses
 * (docs/spec.md §6.3: stdout is one JSON object per line). The fields are the ones it prints.
 */
export class StderrSpanExporter implements SpanExporter {
  constructor(private readonly write: (line: string) => void = (line) => process.stderr.write(line)) {}

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    for (const span of spans) this.write(`${JSON.stringify(spanLine(span))}\n`);
    resultCallback({ code: ExportResultCode.SUCCESS });
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

function spanLine(span: ReadableSpan): Record<string, unknown> {
  const { traceId, spanId } = span.spanContext();
  return {
    span: span.name,
    traceId,
    spanId,
    parentSpanId: span.parentSpanContext?.spanId,
    kind: span.kind,
    service: span.resource.attributes['service.name'],
    scope: span.instrumentationScope.name,
    timestamp: hrTimeToMicroseconds(span.startTime),
    duration: hrTimeToMicroseconds(span.duration),
    attributes: span.attributes,
    status: span.status,
    events: span.events,
    links: span.links,
  };
}
