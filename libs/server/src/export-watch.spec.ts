import type { LogFields, SundialLogger } from '@sundial/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EXPORT_WARN_EVERY_MS, ExportWatch, WatchedExporter } from './export-watch';
import { QueueWatch } from './queue-watch';
import { spanProcessorsFromEnv } from './span-processors';

interface Line {
  level: string;
  message: string;
  fields?: LogFields;
}

function recordingLogger(lines: Line[]): SundialLogger {
  const at = (level: string) => (message: string, fields?: LogFields) =>
    lines.push({ level, message, fields });
  return { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
}

/** A collector whose answer the test sets (500: failing; 200: working). */
async function collector(): Promise<{ server: Server; url: string; status: { code: number } }> {
  const status = { code: 500 };
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () =>
      response.writeHead(status.code, { 'content-type': 'application/json' }).end('{}'),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`, status };
}

/** A port nothing listens on: one bound, then closed. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Exports one span through a watched real OTLP/HTTP exporter; resolves whether it was sent. */
function exportOne(exporter: WatchedExporter): Promise<boolean> {
  const ended = new InMemorySpanExporter();
  new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter: ended })] })
    .getTracer('test')
    .startSpan('one')
    .end();
  return new Promise((resolve) =>
    exporter.export(ended.getFinishedSpans(), (result) => resolve(result.code === 0)),
  );
}

describe('ExportWatch: failed span exports are said, at most once a minute, and their end too', () => {
  it('warns at the first failure with the endpoint and a fix, then once a minute with what was dropped since', () => {
    const lines: Line[] = [];
    let now = 0;
    const watch = new ExportWatch(recordingLogger(lines), 'http://tempo:4318/v1/traces', () => now);
    watch.failed(3, new Error('connect ECONNREFUSED'));
    now = 10_000;
    watch.failed(2, new Error('connect ECONNREFUSED'));
    now = 59_000;
    watch.failed(4, new Error('connect ECONNREFUSED'));
    expect(lines.map((line) => line.level)).toEqual(['warn']);
    expect(lines[0].message).toBe(
      'Traces are lost: 3 spans in 1 batch could not be exported to http://tempo:4318/v1/traces: connect ECONNREFUSED',
    );
    expect(lines[0].fields).toMatchObject({ endpoint: 'http://tempo:4318/v1/traces', droppedSpans: 3 });
    expect(lines[0].fields?.fix).toContain('OTEL_EXPORTER_OTLP_ENDPOINT');
    now = EXPORT_WARN_EVERY_MS;
    watch.failed(1, undefined);
    expect(lines[1]).toMatchObject({
      level: 'warn',
      message:
        'Traces are lost: 7 spans in 3 batches could not be exported since the last line to http://tempo:4318/v1/traces: export failed',
    });
    now += 1_000;
    watch.failed(5, new Error('500'));
    watch.succeeded();
    watch.succeeded();
    expect(lines.slice(2)).toEqual([
      {
        level: 'info',
        message: 'Traces are exported again to http://tempo:4318/v1/traces',
        fields: { endpoint: 'http://tempo:4318/v1/traces', droppedSpans: 5, droppedBatches: 1 },
      },
    ]);
    // failing anew: said at once
    watch.failed(1, new Error('again'));
    expect(lines[3]).toMatchObject({ level: 'warn', fields: { droppedSpans: 1 } });
  });

  it('watches a real OTLP exporter: nothing listening, a collector answering 500, then one that works', async () => {
    const lines: Line[] = [];
    const refused = `http://127.0.0.1:${await closedPort()}/v1/traces`;
    const down = new WatchedExporter(
      // its retries end at the timeout
      new OTLPTraceExporter({ url: refused, timeoutMillis: 300 }),
      new ExportWatch(recordingLogger(lines), refused),
    );
    expect(await exportOne(down)).toBe(false);
    expect(lines).toEqual([expect.objectContaining({ level: 'warn' })]);
    expect(lines[0].message).toContain(`could not be exported to ${refused}: `);
    expect(lines[0].message).toContain('ECONNREFUSED');
    await down.shutdown();

    const { server, url, status } = await collector();
    try {
      const failing = new WatchedExporter(
        new OTLPTraceExporter({ url }),
        new ExportWatch(recordingLogger(lines), url),
      );
      expect(await exportOne(failing)).toBe(false);
      expect(lines[1]).toMatchObject({ level: 'warn', fields: { endpoint: url, droppedSpans: 1 } });
      status.code = 200;
      expect(await exportOne(failing)).toBe(true);
      expect(lines[2]).toMatchObject({ level: 'info', message: `Traces are exported again to ${url}` });
      expect(lines).toHaveLength(3);
      await failing.shutdown();
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('QueueWatch: spans dropped for a full batch queue are said, at most once a minute', () => {
  it('warns at the first drop with a fix, then once a minute with what was dropped since', () => {
    const lines: Line[] = [];
    let now = 0;
    const watch = new QueueWatch(recordingLogger(lines), 'http://tempo:4318/v1/traces', () => now);
    watch.droppedForFullQueue(1);
    now = 30_000;
    watch.droppedForFullQueue(4);
    expect(lines).toEqual([
      expect.objectContaining({
        level: 'warn',
        message:
          'Traces are lost: 1 span dropped because the span queue for http://tempo:4318/v1/traces was full',
      }),
    ]);
    expect(lines[0].fields?.fix).toContain('OTEL_BSP_MAX_QUEUE_SIZE');
    now = EXPORT_WARN_EVERY_MS;
    watch.droppedForFullQueue(2);
    expect(lines[1]).toMatchObject({
      level: 'warn',
      message:
        'Traces are lost: 6 spans dropped since the last line because the span queue for http://tempo:4318/v1/traces was full',
      fields: { droppedSpans: 6 },
    });
  });

  it("is told by the app's real batch processor when its queue is full (a collector that does not answer)", async () => {
    // holds each export unanswered while `holding` (the queue fills), then answers them all
    const waiting: ServerResponse[] = [];
    let holding = true;
    const held = createServer((request, response) => {
      request.resume();
      if (holding) waiting.push(response);
      else response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(held.address() as AddressInfo).port}/v1/traces`;
    const saved = process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
    process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = url; // the exporter reads its endpoint itself
    const lines: Line[] = [];
    let provider: TracerProvider | undefined;
    try {
      const env = { OTEL_BSP_MAX_QUEUE_SIZE: '2', OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2' };
      provider = new TracerProvider({
        spanProcessors: spanProcessorsFromEnv(
          { ...env, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: url },
          recordingLogger(lines),
        ),
      });
      const tracer = provider.getTracer('test');
      // spans 1-2: one export, held; 3-4: the full queue; 5-7: dropped
      for (let i = 0; i < 7; i += 1) tracer.startSpan(`span ${i}`).end();
      expect(lines).toEqual([
        expect.objectContaining({
          level: 'warn',
          message: `Traces are lost: 1 span dropped because the span queue for ${url} was full`,
          fields: expect.objectContaining({ endpoint: url, droppedSpans: 1 }),
        }),
      ]);
    } finally {
      if (saved === undefined) delete process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT;
      else process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT = saved;
      holding = false;
      for (const response of waiting)
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      await provider?.shutdown(); // its queued spans exported
      await new Promise((resolve) => held.close(resolve));
    }
  });
});
