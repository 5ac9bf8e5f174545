import { context, propagation, type Span, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { Timer } from '@sundial/core';
import { RedisTimers } from '@sundial/redis';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type AppProcess,
  clusterEnv,
  ensureBuilt,
  killAll,
  type OtlpReceiver,
  type ReceivedSpan,
  type RedisServer,
  spawnApp,
  spawnCluster,
  startOtlpReceiver,
  startRedis,
  waitFor,
} from '@sundial/testing/harness';

/** OTLP span kinds (the JSON encoding's numbers). */
const SERVER = 2;
const CLIENT = 3;

function only(spans: ReceivedSpan[], name: string): ReceivedSpan {
  const found = spans.filter((span) => span.name === name);
  if (found.length !== 1) throw new Error(`expected one ${name} span, got ${found.length}`);
  return found[0];
}

/**
 * Tracing across real processes (docs/design.md "Tracing"): this test, a scheduler and a worker, each
 * exporting OTLP/HTTP JSON to a receiver here. A timer scheduled in a test's span must come back as ONE
 * trace: the test's span → the scheduler's dispatch → the worker's run (and claim) → the span the
 * handler made itself, with the timer's attributes. A second pair (prefix `dropped`) names itself through
 * OTEL_* resource variables, and its scheduler samples no trace it starts itself.
 */
describe('cluster: one trace from schedule() to the handler', () => {
  let redis: RedisServer;
  let receiver: OtlpReceiver;
  let apps: AppProcess[] = [];
  let scheduler: AppProcess;
  let client: RedisTimers;
  /** the second pair's timers */
  let dropped: RedisTimers;
  let provider: TracerProvider;
  let target: Server;
  const targetHeaders: Record<string, string | string[] | undefined>[] = [];
  const tracer = trace.getTracer('sundial-test');

  /** Runs `work` in a span of this test; resolves its result and the span's trace id. */
  async function inTestSpan<T>(name: string, work: (span: Span) => Promise<T>): Promise<[T, string, string]> {
    return tracer.startActiveSpan(name, async (span): Promise<[T, string, string]> => {
      const result = await work(span);
      span.end();
      return [result, span.spanContext().traceId, span.spanContext().spanId];
    });
  }

  /** The trace's spans once every named span has been received. */
  function traceWith(traceId: string, names: string[]): Promise<ReceivedSpan[]> {
    return waitFor(
      () => {
        const spans = receiver.trace(traceId);
        return names.every((name) => spans.some((span) => span.name === name)) && spans;
      },
      // deadline: a run due in 300 ms, its spans exported within OTEL_BSP_SCHEDULE_DELAY (100 ms) of its end
      { timeoutMs: 20_000, what: `spans ${names.join(', ')} of trace ${traceId}` },
    ).catch((error: Error) => {
      throw new Error(`${error.message}\n${whatWasSeen(traceId)}`);
    });
  }

  /** For a failure's message: the trace's spans received, and what the apps said other than info. */
  function whatWasSeen(traceId: string): string {
    const spans = receiver.trace(traceId).map((span) => `${span.service} ${span.name}`);
    const said = apps.flatMap((app) =>
      app.lines.filter((line) => !line.includes('"level":"info"')).map((line) => `${app.name}: ${line}`),
    );
    return (
      `received of that trace: ${spans.join(', ') || 'nothing'} (${receiver.spans.length} spans in all)\n` +
      `the apps' warnings and errors:\n${said.join('\n') || 'none'}`
    );
  }

  beforeAll(async () => {
    [redis, receiver] = await Promise.all([startRedis(), startOtlpReceiver(), ensureBuilt()]);
    target = createServer((request, response) => {
      targetHeaders.push(request.headers);
      response.writeHead(204).end();
    });
    await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
    const targetPort = (target.address() as AddressInfo).port;
    const env = clusterEnv(redis.url, {
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      SUNDIAL_HTTP_ALLOW: `127.0.0.1:${targetPort}`,
    });
    const droppedEnv = { ...env, SUNDIAL_PREFIX: 'dropped' };
    const [cluster, ...pair] = await Promise.all([
      spawnCluster(env, 1, 1),
      spawnApp('scheduler', 'dropped-scheduler', {
        ...droppedEnv,
        OTEL_TRACES_SAMPLER: 'parentbased_always_off',
        OTEL_RESOURCE_ATTRIBUTES: 'service.name=billing-scheduler,deployment.environment=test',
      }),
      spawnApp('worker', 'dropped-worker', {
        ...droppedEnv,
        OTEL_SERVICE_NAME: 'billing-worker',
        OTEL_RESOURCE_ATTRIBUTES: 'service.name=not-this-one',
      }),
    ]);
    apps = [...cluster.schedulers, ...cluster.workers, ...pair];
    scheduler = cluster.schedulers[0];
    // This process traces too: its spans are the callers' the timers' traces start from.
    provider = new TracerProvider({
      spanProcessors: [
        new SimpleSpanProcessor({ exporter: new OTLPTraceExporter({ url: `${receiver.url}/v1/traces` }) }),
      ],
    });
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    trace.setGlobalTracerProvider(provider);
    client = new RedisTimers({ connection: redis.url, partitions: 2 });
    dropped = new RedisTimers({ connection: redis.url, partitions: 2, prefix: 'dropped' });
  }, 180_000);

  afterAll(async () => {
    await client?.dispose();
    await dropped?.dispose();
    await provider?.shutdown();
    trace.disable();
    propagation.disable();
    context.disable();
    await killAll(apps);
    await new Promise((resolve) => target?.close(resolve));
    await receiver?.close();
    await redis?.stop();
  });

  it('follows a one-shot timer from the client call through the scheduler and the worker to the handler’s span', async () => {
    const [timer, traceId, testSpanId] = await inTestSpan('test.schedule', () =>
      client.schedule({ key: 'traced:once', handler: 'traced', delay: '300ms' }),
    );
    const spans = await traceWith(traceId, [
      'test.schedule',
      'sundial.dispatch',
      'sundial.run',
      'test.handler',
    ]);
    const dispatch = only(spans, 'sundial.dispatch');
    const run = only(spans, 'sundial.run');
    const claim = only(spans, 'sundial.claim');
    const handler = only(spans, 'test.handler');
    expect(only(spans, 'test.schedule').spanId).toBe(testSpanId);
    // one chain across three processes
    expect([dispatch.service, dispatch.parentSpanId]).toEqual(['sundial-scheduler', testSpanId]);
    expect([run.service, run.parentSpanId]).toEqual(['sundial-worker', dispatch.spanId]);
    expect([claim.service, claim.parentSpanId]).toEqual(['sundial-worker', run.spanId]);
    expect([handler.service, handler.parentSpanId]).toEqual(['sundial-worker', run.spanId]);
    const identity = {
      'sundial.key': 'traced:once',
      'sundial.id': timer.id,
      'sundial.version': 1,
      'sundial.due': timer.dueAt,
    };
    expect(dispatch.attributes).toMatchObject(identity);
    expect(run.attributes).toMatchObject({
      ...identity,
      'sundial.outcome': 'ok',
      'sundial.handler': 'traced',
    });
    expect(run.attributes['sundial.lateness_ms']).toBeGreaterThanOrEqual(0);
    expect(handler.attributes['sundial.key']).toBe('traced:once');
  });

  it('continues the trace of an HTTP call’s traceparent, and the http handler passes it on', async () => {
    const port = (target.address() as AddressInfo).port;
    const [reply, traceId, testSpanId] = await inTestSpan('test.request', () => {
      const headers: Record<string, string> = {};
      propagation.inject(context.active(), headers);
      return scheduler.api<Timer>(
        'POST',
        '/v1/timers',
        {
          key: 'traced:http',
          handler: 'http',
          delay: '300ms',
          payload: { url: `http://127.0.0.1:${port}/hook` },
        },
        { headers },
      );
    });
    expect(reply.status).toBe(201);
    const spans = await traceWith(traceId, ['sundial.dispatch', 'sundial.run']);
    const request = spans.find((span) => span.kind === SERVER && span.service === 'sundial-scheduler');
    expect(request?.parentSpanId).toBe(testSpanId);
    // named by its route, as OpenTelemetry's HTTP conventions name a server span
    expect([request?.name, request?.attributes['http.route']]).toEqual(['POST /v1/timers', '/v1/timers']);
    const dispatch = only(spans, 'sundial.dispatch');
    const run = only(spans, 'sundial.run');
    expect(dispatch.parentSpanId).toBe(request!.spanId);
    expect(run.parentSpanId).toBe(dispatch.spanId);
    expect(run.attributes).toMatchObject({ 'sundial.key': 'traced:http', 'sundial.outcome': 'ok' });
    // The handler's call went out in the run's trace: its client span is the parent the target saw.
    const outgoing = await waitFor(
      () => receiver.trace(traceId).find((span) => span.kind === CLIENT && span.parentSpanId === run.spanId),
      { what: 'the http handler’s client span' },
    );
    expect(targetHeaders.map((headers) => headers.traceparent)).toContain(
      `00-${traceId}-${outgoing.spanId}-01`,
    );
  });

  it('ends the span of a run cancelled while it runs as its ledger says: stale, not a failure', async () => {
    const [, traceId] = await inTestSpan('test.schedule', () =>
      client.schedule({ key: 'traced:cancelled', handler: 'slow', payload: { ms: 20_000 }, delay: '100ms' }),
    );
    await waitFor(async () => (await client.get('traced:cancelled'))?.status === 'running', {
      what: 'the run to start',
    });
    expect(await client.cancel('traced:cancelled')).toBe(true);
    const run = only(await traceWith(traceId, ['sundial.run']), 'sundial.run');
    expect(run.attributes).toMatchObject({ 'sundial.outcome': 'stale', 'sundial.stale_reason': 'gone' });
    expect(run.status.code ?? 0).toBe(0); // unset: nothing failed that the ledger records
  });

  it('gives each run of a periodic timer a trace of its own, linked to the scheduling span', async () => {
    const [, traceId, testSpanId] = await inTestSpan('test.schedule', () =>
      client.schedule({ key: 'traced:every', handler: 'traced', every: '300ms', maxRuns: 2 }),
    );
    const dispatches = await waitFor(
      () => {
        const linked = receiver.spans.filter(
          (span) => span.name === 'sundial.dispatch' && span.links.some((link) => link.spanId === testSpanId),
        );
        return linked.length === 2 && linked;
      },
      { timeoutMs: 20_000, what: 'two linked dispatch spans' },
    );
    expect(dispatches.map((span) => span.links)).toEqual([
      [{ traceId, spanId: testSpanId }],
      [{ traceId, spanId: testSpanId }],
    ]);
    const runTraces = dispatches.map((span) => span.traceId);
    expect(new Set([traceId, ...runTraces]).size).toBe(3);
    for (const [n, runTrace] of runTraces.entries()) {
      const spans = await traceWith(runTrace, ['sundial.dispatch', 'sundial.run', 'test.handler']);
      expect(only(spans, 'sundial.dispatch').parentSpanId).toBe('');
      expect(only(spans, 'sundial.run').parentSpanId).toBe(dispatches[n].spanId);
      expect(only(spans, 'sundial.run').attributes).toMatchObject({
        'sundial.key': 'traced:every',
        'sundial.kind': 'interval',
        'sundial.outcome': 'ok',
      });
    }
    expect(receiver.trace(traceId).map((span) => span.name)).toEqual(['test.schedule']);
  });

  it('keeps the timers of one fire job in their own traces, and an untraced one’s handler in none of them', async () => {
    const keys = ['batch:a', 'batch:b', 'batch:c', 'batch:d', 'batch:e', 'batch:f'];
    const partition = client.keys.partitionOf('batch:a');
    const [a, b, untraced] = keys.filter((key) => client.keys.partitionOf(key) === partition);
    // Due once all three calls have landed, one after the other on a loaded host, so the dispatcher takes
    // them together (a lead of 200 ms before it): with 600 ms, `a` went alone in a job of its own when
    // the three calls took over 400 ms.
    const at = Date.now() + 3_000; // deadline: traceWith waits for the runs up to 20 s
    const [, traceA, spanA] = await inTestSpan('test.a', () =>
      client.schedule({ key: a, handler: 'traced', at }),
    );
    const [, traceB, spanB] = await inTestSpan('test.b', () =>
      client.schedule({ key: b, handler: 'traced', at }),
    );
    await client.schedule({ key: untraced, handler: 'traced', at });
    const traces = await Promise.all(
      [traceA, traceB].map((traceId) =>
        traceWith(traceId, ['sundial.dispatch', 'sundial.run', 'test.handler']),
      ),
    );
    const dispatches = traces.map((spans) => only(spans, 'sundial.dispatch'));
    expect(dispatches[0].attributes['sundial.job_id']).toBe(dispatches[1].attributes['sundial.job_id']);
    const expected = [
      { key: a, testSpan: spanA },
      { key: b, testSpan: spanB },
    ];
    for (const [n, { key, testSpan }] of expected.entries()) {
      const spans = traces[n];
      // no span of another timer in this trace
      const keyed = spans.filter((span) => span.attributes['sundial.key'] !== undefined);
      expect(new Set(keyed.map((span) => span.attributes['sundial.key']))).toEqual(new Set([key]));
      expect(dispatches[n].parentSpanId).toBe(testSpan);
      expect(only(spans, 'test.handler').parentSpanId).toBe(only(spans, 'sundial.run').spanId);
    }
    const alone = await waitFor(
      () =>
        receiver.spans.find(
          (span) => span.name === 'test.handler' && span.attributes['sundial.key'] === untraced,
        ),
      { what: 'the untraced run’s handler span' },
    );
    expect(alone.parentSpanId).toBe('');
  });

  it('names an app by OTEL_SERVICE_NAME, else by the service.name of OTEL_RESOURCE_ATTRIBUTES', async () => {
    const [, traceId] = await inTestSpan('test.schedule', () =>
      dropped.schedule({ key: 'named:once', handler: 'traced', delay: '300ms' }),
    );
    const spans = await traceWith(traceId, ['sundial.dispatch', 'sundial.run']);
    const dispatch = only(spans, 'sundial.dispatch');
    expect([dispatch.service, dispatch.resource['deployment.environment']]).toEqual([
      'billing-scheduler',
      'test',
    ]);
    expect(only(spans, 'sundial.run').service).toBe('billing-worker');
  });

  it('leaves a periodic run untraced when the sampler dropped its dispatch: the worker follows that decision', async () => {
    // The scheduling span is sampled, so it is recorded on the row; each run's dispatch starts a trace
    // of its own, which this scheduler's sampler drops.
    await inTestSpan('test.schedule', () =>
      dropped.schedule({
        key: 'dropped:every',
        handler: 'traced',
        every: '300ms',
        maxRuns: 2,
        removeOnComplete: false,
      }),
    );
    await waitFor(async () => (await dropped.get('dropped:every'))?.status === 'completed', {
      timeoutMs: 20_000, // deadline
      what: 'the two runs of dropped:every',
    });
    // A traced one-shot after them on the same worker: once its spans are in, the runs' would be too.
    const [, traceId] = await inTestSpan('test.schedule', () =>
      dropped.schedule({ key: 'dropped:once', handler: 'traced', delay: '100ms' }),
    );
    await traceWith(traceId, ['sundial.dispatch', 'sundial.run', 'test.handler']);
    expect(receiver.spans.filter((span) => span.attributes['sundial.key'] === 'dropped:every')).toEqual([]);
  });
});
