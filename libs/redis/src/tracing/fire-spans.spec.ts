import { SpanStatusCode, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import type { TimerRef } from '../store/fire-commands';
import { DispatchSpans, RunSpan } from './fire-spans';

const scheduledIn = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
/** a claimed one-shot's row fields, scheduled in `scheduledIn` */
const fields = { key: 'k', id: '1p0', rv: '1', h: 'h', k: 'once', rc: '1', tp: scheduledIn };
const claimTimes = { claimSentAt: 995, claimAnsweredAt: 996 };

/** One dispatch and one run of a traced one-shot timer, their spans ended. */
function dispatchAndRun(): void {
  const ref: TimerRef = { id: '1p0', key: 'k', version: 1, due: 1_000 };
  const taken = {
    job: { jobId: 'j', timers: [ref] },
    traced: [{ key: 'k', traceParent: scheduledIn, kind: 'once' }],
    nextDue: null,
    now: 990,
  };
  DispatchSpans.start(taken, 'sundial-fire-{p0}')!.end();
  const run = RunSpan.start(fields, 1_000, ref.tp, claimTimes, 0)!;
  run.end({ outcome: 'ok' }, undefined, 1_010);
}

function useProvider(): InMemorySpanExporter {
  const exporter = new InMemorySpanExporter();
  trace.setGlobalTracerProvider(
    new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }),
  );
  return exporter;
}

describe('fire path spans and the host app’s TracerProvider', () => {
  afterEach(() => trace.disable());

  // A host's tests (or a hot reload) replace the global provider: trace.disable(), then a new one.
  // A tracer taken once at module load kept the first provider, so every later span went to it (shut
  // down by then: lost) while the app's own spans, and the handler's, went to the new one.
  it('goes to the provider registered now, not to the first one it saw', () => {
    const first = useProvider();
    dispatchAndRun();
    const names = ['sundial.dispatch', 'sundial.claim', 'sundial.run'];
    expect(first.getFinishedSpans().map((span) => span.name)).toEqual(names);
    trace.disable();
    const second = useProvider();
    dispatchAndRun();
    expect(second.getFinishedSpans().map((span) => span.name)).toEqual(names);
    expect(first.getFinishedSpans()).toHaveLength(3);
  });

  // OpenTelemetry's convention (and what a trace view shows a stack from): a failed operation's error is an
  // `exception` event beside the error status. The span had the status and message only; the stack was
  // in the log line alone.
  it('records a failed run’s error as an exception event, with the stack its handler threw', () => {
    const exporter = useProvider();
    const thrown = new TypeError('invoice 42 has no customer');
    RunSpan.start(fields, 1_000, undefined, claimTimes, 0)!.end({
      outcome: 'failed',
      error: { message: thrown.message },
      stack: thrown.stack,
    });
    const run = exporter.getFinishedSpans().find((span) => span.name === 'sundial.run')!;
    expect(run.status).toEqual({ code: SpanStatusCode.ERROR, message: thrown.message });
    expect(run.events.map(({ name, attributes }) => ({ name, attributes }))).toEqual([
      {
        name: 'exception',
        attributes: { 'exception.message': thrown.message, 'exception.stacktrace': thrown.stack },
      },
    ]);
  });
});
