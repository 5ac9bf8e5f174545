import { MAX_TIMEOUT_MS, type SundialLogger } from '@sundial/core';
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
        ...batching(env, logger),
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

/**
 * OTEL_BSP_*: each a whole number from 1 (and, for the two durations, Node timers, at most 2^31−1 ms: a
 * longer one fires after 1 ms), its default when unset. The BatchSpanProcessor takes what it is given:
 * a 0 dropped every span (queue size), flushed in an endless loop at shutdown (batch size) or gave up
 * every export at once (timeout). Another value is said at start, as an unknown exporter is, and the
 * SDK's default used (the SDK, reading them itself, uses its default for one ≤ 0 or not a number too,
 * said only on the console with OTEL_LOG_LEVEL set).
 */
const BATCH_SETTINGS = [
  ['maxQueueSize', 'OTEL_BSP_MAX_QUEUE_SIZE', 2048, Number.MAX_SAFE_INTEGER],
  ['scheduledDelayMillis', 'OTEL_BSP_SCHEDULE_DELAY', 5000, MAX_TIMEOUT_MS],
  ['exportTimeoutMillis', 'OTEL_BSP_EXPORT_TIMEOUT', 30000, MAX_TIMEOUT_MS],
  ['maxExportBatchSize', 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512, Number.MAX_SAFE_INTEGER],
] as const;

type Batching = { [K in (typeof BATCH_SETTINGS)[number][0]]?: number };

function batching(env: NodeJS.ProcessEnv, logger: SundialLogger): Batching {
  const settings: Batching = {};
  for (const [option, name, fallback, max] of BATCH_SETTINGS) {
    const text = env[name]?.trim();
    if (!text) continue;
    const value = Number(text);
    if (/^\d+$/.test(text) && value >= 1 && value <= max) {
      settings[option] = value;
      continue;
    }
    const range = max === MAX_TIMEOUT_MS ? `ms from 1 to ${max}` : 'from 1';
    logger.warn(`${name} is '${text}', not a whole number ${range}: the default ${fallback} is used`, {
      fix: `Write ${name} as a whole number ${range}, e.g. ${fallback}, or unset it for the default.`,
    });
  }
  return settings;
}
