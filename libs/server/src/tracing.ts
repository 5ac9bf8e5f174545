import type { SundialLogger } from '@sundial/core';
import type { IncomingMessage } from 'node:http';

/** The SDK while tracing runs; its shutdown flushes the spans still buffered. */
let sdk: { shutdown(): Promise<void> } | undefined;

/**
 * Tracing is on when the standard OTEL_* variables ask for it: an OTLP endpoint, or an explicit
 * OTEL_TRACES_EXPORTER other than `none`, and not OTEL_SDK_DISABLED. Otherwise nothing is loaded and
 * `@opentelemetry/api` stays the no-op it is by default (no span is ever made).
 */
export function tracingConfigured(env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  const exporter = env.OTEL_TRACES_EXPORTER?.trim();
  if (exporter) return exporter !== 'none';
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/**
 * Starts the OpenTelemetry SDK for traces, configured by the standard OTEL_* variables (exporter,
 * endpoint, protocol, headers, sampler, propagators, resource: docs/spec.md §5.4). It must run before
 * Nest and Express load — each app's `tracing.ts`, imported by its main.ts once the environment is
 * read — because the http instrumentation patches `http` as it is required: it continues the trace of
 * an incoming `traceparent` in the scheduler and traces the `http` handler's calls in the worker. Only traces:
 * metrics stay on /metrics (Prometheus) and logs on stdout, so the SDK's OTLP metrics and logs are off.
 * The exporters are Sundial's own choice of the SDK's (span-processors.ts): a failed export is logged,
 * and `console` writes on stderr.
 */
export function startTracing(
  serviceName: string,
  env: NodeJS.ProcessEnv = process.env,
  logger?: SundialLogger,
): void {
  if (sdk || !tracingConfigured(env)) return;
  // Loaded only when tracing is on: the SDK and its exporters are some 40 modules nobody else needs.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { NodeSDK } = require('@opentelemetry/sdk-node') as typeof import('@opentelemetry/sdk-node');
  const { HttpInstrumentation } =
    require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { defaultResource, resourceFromAttributes } =
    require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { spanProcessorsFromEnv } = require('./span-processors') as typeof import('./span-processors');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const started = new NodeSDK({
    // service.name: OTEL_SERVICE_NAME, else OTEL_RESOURCE_ATTRIBUTES's, else the app's (the OTel spec's
    // order). The app's is the base resource, beneath what the SDK detects; `serviceName` overrides all.
    resource: defaultResource().merge(resourceFromAttributes({ 'service.name': serviceName })),
    serviceName: env.OTEL_SERVICE_NAME?.trim() || undefined,
    spanProcessors: spanProcessorsFromEnv(env, logger ?? appLogger(env)),
    metricReaders: [],
    logRecordProcessors: [],
    instrumentations: [
      new HttpInstrumentation({
        // Probes and scrapes every few seconds would bury the traces worth reading.
        ignoreIncomingRequestHook: (request: IncomingMessage) =>
          /^\/(health|metrics)\b/.test(request.url ?? ''),
      }),
    ],
  });
  started.start();
  sdk = started;
}

/**
 * The app's log lines (pino, JSON on stdout: docs/spec.md §6.3) before Nest made its logger; a LOG_LEVEL
 * the app refuses at start is read as `info` here.
 */
function appLogger(env: NodeJS.ProcessEnv): SundialLogger {
  // pino only once tracing is on
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { createPino, parseLogLevel, sundialLogger } =
    require('./pino-logger') as typeof import('./pino-logger');
  /* eslint-enable @typescript-eslint/no-require-imports */
  let level: ReturnType<typeof parseLogLevel> = 'info';
  try {
    level = parseLogLevel(env.LOG_LEVEL);
  } catch {
    // the app's config refuses it, saying why
  }
  return sundialLogger(createPino(level));
}

/** Flushes and stops the SDK (after the app closed, before the process exits); a no-op when off. */
export async function stopTracing(): Promise<void> {
  const running = sdk;
  sdk = undefined;
  // A collector that cannot be reached costs the last spans (the export watch says so), not a clean exit.
  await running?.shutdown().catch(() => undefined);
}
