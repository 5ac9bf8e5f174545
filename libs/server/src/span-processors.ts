import type { SundialLogger } from '@sundial/core';
import type { SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace';
import { ExportWatch, WatchedExporter } from './export-watch';
import { QueueWatch } from './queue-watch';
import { StderrSpanExporter } from './stderr-span-exporter';

/* eslint-disable @typescript-eslint/no-require-imports -- loaded only when tracing is on, each exporter only when named */

/**
 * The span processors OTEL_TRACES_EXPORTER names (default `otlp`), as the SDK would make them from the
 * environment, but: every exporter that sends spans away is watched (`ExportWatch`: a failed export is
 * said, not only at OTEL_LOG_LEVEL=debug; `QueueWatch`: so is a span dropped for a full queue), and
 * `console` writes JSON lines on stderr, not on stdout where the logs are. Each exporter reads its own
 * OTEL_EXPORTER_* variables; the batches OTEL_BSP_*.
 */
export function spanProcessorsFromEnv(env: NodeJS.ProcessEnv, logger: SundialLogger): SpanProcessor[] {
  const { BatchSpanProcessor, SimpleSpanProcessor } =
    require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace');
  const names = [...new Set((env.OTEL_TRACES_EXPORTER?.trim() || 'otlp').split(',').map((n) => n.trim()))];
  const processors: SpanProcessor[] = [];
  for (const name of names.filter((n) => n && n !== 'none')) {
    if (name === 'console') {
      processors.push(new SimpleSpanProcessor({ exporter: new StderrSpanExporter() }));
      continue;
    }
    const remote = remoteExporter(name, env, logger);
    if (!remote) {
      logger.warn(`OTEL_TRACES_EXPORTER names '${name}', which this app does not have: ignored`, {
        fix: 'Use otlp, console, zipkin or none.',
      });
      continue;
    }
    const watch = new ExportWatch(logger, remote.endpoint);
    processors.push(
      new BatchSpanProcessor({
        exporter: new WatchedExporter(remote.exporter, watch),
        // a span dropped for a full queue is said too, not only at OTEL_LOG_LEVEL=debug
        selfObsMeterProvider: new QueueWatch(logger, remote.endpoint).meterProvider(),
        ...batching(env),
      }),
    );
  }
  return processors;
}

/** OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL's values ('' unset: http/protobuf). */
const OTLP_PROTOCOLS = ['', 'http/protobuf', 'http/json', 'grpc'];

/** An exporter that sends spans to a collector, and where (as it reads the variables). */
function remoteExporter(
  name: string,
  env: NodeJS.ProcessEnv,
  logger: SundialLogger,
): { exporter: SpanExporter; endpoint: string } | undefined {
  if (name === 'zipkin') {
    const { ZipkinExporter } =
      require('@opentelemetry/exporter-zipkin') as typeof import('@opentelemetry/exporter-zipkin');
    const endpoint = env.OTEL_EXPORTER_ZIPKIN_ENDPOINT?.trim() || 'http://localhost:9411/api/v2/spans';
    return { exporter: new ZipkinExporter(), endpoint };
  }
  if (name !== 'otlp') return undefined;
  const protocol =
    (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim() || env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim()) ?? '';
  if (!OTLP_PROTOCOLS.includes(protocol)) {
    // as for an exporter it lacks: said, not silently sent as http/protobuf to a collector expecting other
    const variable = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL?.trim()
      ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL'
      : 'OTEL_EXPORTER_OTLP_PROTOCOL';
    logger.warn(`${variable} names '${protocol}', which this app does not have: http/protobuf is used`, {
      fix: 'Use http/protobuf or http/json (port 4318) or grpc (port 4317).',
    });
  }
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (protocol === 'grpc') {
    const { OTLPTraceExporter } =
      require('@opentelemetry/exporter-trace-otlp-grpc') as typeof import('@opentelemetry/exporter-trace-otlp-grpc');
    return { exporter: new OTLPTraceExporter(), endpoint: traces || base || 'http://localhost:4317' };
  }
  const endpoint = traces || `${(base || 'http://localhost:4318').replace(/\/+$/, '')}/v1/traces`;
  if (protocol === 'http/json') {
    const { OTLPTraceExporter } =
      require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
    return { exporter: new OTLPTraceExporter(), endpoint };
  }
  const { OTLPTraceExporter } =
    require('@opentelemetry/exporter-trace-otlp-proto') as typeof import('@opentelemetry/exporter-trace-otlp-proto');
  return { exporter: new OTLPTraceExporter(), endpoint };
}

/** OTEL_BSP_* (unset: the SDK's defaults). */
function batching(env: NodeJS.ProcessEnv): {
  maxQueueSize?: number;
  scheduledDelayMillis?: number;
  exportTimeoutMillis?: number;
  maxExportBatchSize?: number;
} {
  const read = (name: string): number | undefined => {
    const value = Number(env[name]?.trim() || Number.NaN);
    return Number.isFinite(value) && value >= 0 ? value : undefined;
  };
  return {
    maxQueueSize: read('OTEL_BSP_MAX_QUEUE_SIZE'),
    scheduledDelayMillis: read('OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMillis: read('OTEL_BSP_EXPORT_TIMEOUT'),
    maxExportBatchSize: read('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
  };
}
