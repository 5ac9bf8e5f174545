import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { waitFor } from '@sundial/testing/harness';
import { recorder, refOf, useFirePath } from './fire-fixture';

const fire = useFirePath();

/**
 * docs/spec.md §6.4: a timer scheduled outside any span runs untraced, and a traced one's handler runs in
 * its run span. The handler is called from the BullMQ worker's loop, whose async context is the one the
 * runner was started in: an app that starts its worker inside a span (an admin request calling
 * `SundialWorker.start()`, an `app.init()` inside a serverless invocation's span) had every untraced run
 * in that long-ended span's trace, and each timer such a handler scheduled stamped with it.
 */
describe('fire path: the context a handler runs in', () => {
  const exporter = new InMemorySpanExporter();
  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(
      new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }),
    );
  });
  afterAll(() => {
    trace.disable();
    context.disable();
  });

  it('runs an untraced timer outside any span, whatever span the worker was started in', async () => {
    const cluster = await fire.cluster();
    const active: (string | undefined)[] = [];
    const handler = recorder(() => void active.push(trace.getActiveSpan()?.spanContext().spanId));
    const started = await trace.getTracer('host-app').startActiveSpan('POST /admin/start', async (span) => {
      await cluster.runner({ h: handler.handler });
      span.end();
      return span.spanContext().spanId;
    });
    const timer = await cluster.timers.schedule({ key: 'k', handler: 'h', delay: 50 });
    await cluster.queueOf('k').add('fire', { timers: [refOf(timer)] }, { jobId: 'untraced' });
    await waitFor(() => active.length === 1, { what: 'the run' });
    // before: the span the runner was started in (`started`)
    expect({ active, started }).toEqual({ active: [undefined], started });
  });
});
