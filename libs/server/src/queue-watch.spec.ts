import type { LogFields, SundialLogger } from '@sundial/core';
import { TracerProvider } from '@opentelemetry/sdk-trace';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EXPORT_WARN_EVERY_MS } from './export-watch';
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
