import { trace } from '@opentelemetry/api';
import { hrTimeToMilliseconds } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { RUN_TIMING_CHANNEL, type RunTiming } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { recorder, refOf, useFirePath } from './fire-fixture';

const fire = useFirePath();

describe('fire path: run timings (diagnostics_channel sundial:run-timing)', () => {
  const timings: RunTiming[] = [];
  const record = (message: unknown) => void timings.push(message as RunTiming);
  beforeEach(() => subscribe(RUN_TIMING_CHANNEL, record));
  afterEach(() => {
    unsubscribe(RUN_TIMING_CHANNEL, record);
    timings.length = 0;
  });

  it("tells where a run's lateness went: the job's arrival, the claim sent and answered, the start", async () => {
    const cluster = await fire.cluster();
    const handler = recorder();
    await cluster.runner({ h: handler.handler });
    const timer = await cluster.timers.schedule({ key: 'k', handler: 'h', delay: 150 });
    // No dispatcher: the job arrives at once, well before the due.
    await cluster.queueOf('k').add('fire', { timers: [refOf(timer)] }, { jobId: 'timed' });
    await waitFor(() => timings.length === 1, { what: 'a run timing' });
    const [timing] = timings;
    expect(timing).toMatchObject({ key: 'k', due: timer.dueAt });
    expect(timing.claimCalls).toBeGreaterThanOrEqual(1);
    expect(timing.claimSentAt).toBeGreaterThanOrEqual(timing.arrivedAt);
    expect(timing.claimAnsweredAt).toBeGreaterThanOrEqual(timing.claimSentAt);
    expect(timing.startedAt).toBeGreaterThanOrEqual(timing.claimAnsweredAt);
    expect(handler.calls).toHaveLength(1);
  });

  it('puts the claim’s round trip, not the wait for the due after it, in a traced run’s sundial.claim span', async () => {
    const exporter = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(
      new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }),
    );
    try {
      const cluster = await fire.cluster();
      // claimed 50 ms ahead of its due: the run waits that long once the claim is answered
      await cluster.runner({ h: recorder().handler }, { claimAheadMs: 50 });
      const timer = await cluster.timers.schedule({ key: 'k', handler: 'h', delay: 300 });
      const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      await cluster.queueOf('k').add('fire', { timers: [{ ...refOf(timer), tp }] }, { jobId: 'traced' });
      const claim = await waitFor(
        () => exporter.getFinishedSpans().find((span) => span.name === 'sundial.claim'),
        { what: 'the claim span' },
      );
      await waitFor(() => timings.length === 1, { what: 'a run timing' });
      const [timing] = timings;
      expect([hrTimeToMilliseconds(claim.startTime), hrTimeToMilliseconds(claim.endTime)]).toEqual([
        timing.claimSentAt,
        timing.claimAnsweredAt,
      ]);
      // the run span ends once its completion is answered (its outcome then known: ok, failed or stale)
      const run = await waitFor(
        () => exporter.getFinishedSpans().find((span) => span.name === 'sundial.run'),
        { what: 'the run span' },
      );
      expect(hrTimeToMilliseconds(run.startTime)).toBe(timing.claimSentAt);
    } finally {
      trace.disable();
    }
  });
});
