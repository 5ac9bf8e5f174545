import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as an OTLP exporter sent it, flattened: attribute values decoded, its service attached. */
export interface ReceivedSpan {
  service: string;
  /** its process's resource (service.name is `service`) */
  resource: Record<string, string | number | boolean>;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  links: { traceId: string; spanId: string }[];
  status: { code?: number; message?: string };
}

export interface OtlpReceiver {
  /** the base URL, as OTEL_EXPORTER_OTLP_ENDPOINT (spans are POSTed to `<url>/v1/traces`) */
  url: string;
  spans: ReceivedSpan[];
  /** what it answers an export (200; set 500 to play a failing collector: the spans are then not kept) */
  status: number;
  /** the spans received so far of one trace */
  trace(traceId: string): ReceivedSpan[];
  close(): Promise<void>;
}

interface AnyValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
}
interface KeyValue {
  key: string;
  value: AnyValue;
}
interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: {
      spans?: (Omit<ReceivedSpan, 'service' | 'resource' | 'attributes'> & { attributes?: KeyValue[] })[];
    }[];
  }[];
}

/**
 * A tiny OTLP/HTTP trace receiver on 127.0.0.1 (JSON encoding: exporters set
 * OTEL_EXPORTER_OTLP_PROTOCOL=http/json), keeping every span it is sent — what Tempo or a collector
 * would receive, for tests that follow a trace across processes.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  let status = 200;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url !== '/v1/traces' || !request.headers['content-type']?.includes('json')) {
        response.writeHead(415).end();
        return;
      }
      if (status === 200)
        spans.push(...flatten(JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExportRequest));
      response.writeHead(status, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    get status() {
      return status;
    },
    set status(code) {
      status = code;
    },
    trace: (traceId) => spans.filter((span) => span.traceId === traceId),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

function flatten(body: ExportRequest): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    const service = String(resource['service.name']);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        service,
        resource,
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? '',
        name: span.name,
        kind: span.kind,
        attributes: attributesOf(span.attributes),
        links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
        status: span.status ?? {},
      })),
    );
  });
}

function attributesOf(list: KeyValue[] = []): Record<string, string | number | boolean> {
  const attributes: Record<string, string | number | boolean> = {};
  for (const { key, value } of list) {
    // OTLP JSON writes 64-bit integers as strings.
    attributes[key] =
      value.stringValue ??
      (value.intValue !== undefined ? Number(value.intValue) : undefined) ??
      value.doubleValue ??
      value.boolValue ??
      '';
  }
  return attributes;
}
