import type { LogFields, SundialLogger } from '@sundial/core';
import { type SundialObserver, type SundialObserverEvents, TimerRunner } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { eventually, gate, matching, recorder, useFirePath } from './fire-fixture';

const fire = useFirePath();

type Reported = { [E in keyof SundialObserverEvents]: SundialObserverEvents[E][] };

/** An observer that keeps what it is told, and a logger that keeps its lines. */
function watchers() {
  const reported: Reported = {
    scheduled: [],
    cancelled: [],
    runFinished: [],
    runUnanswered: [],
    stale: [],
    skipped: [],
    reconciled: [],
    workerLost: [],
    consumerRecreated: [],
    consuming: [],
  };
  const observer: SundialObserver = {
    scheduled: (event) => reported.scheduled.push(event),
    cancelled: (event) => reported.cancelled.push(event),
    runFinished: (event) => reported.runFinished.push(event),
    runUnanswered: (event) => reported.runUnanswered.push(event),
    stale: (event) => reported.stale.push(event),
    skipped: (event) => reported.skipped.push(event),
    reconciled: (event) => reported.reconciled.push(event),
    workerLost: (event) => reported.workerLost.push(event),
    consumerRecreated: (event) => reported.consumerRecreated.push(event),
    consuming: (event) => reported.consuming.push(event),
  };
  const lines: { level: string; message: string; fields: LogFields }[] = [];
  const at =
    (level: string) =>
    (message: string, fields: LogFields = {}) =>
      void lines.push({ level, message, fields });
  const logger: SundialLogger = {
    error: at('error'),
    warn: at('warn'),
    info: at('info'),
    debug: at('debug'),
  };
  return { reported, observer, lines, logger };
}

/** What the runner and the scripts report (docs/spec.md §3.3, §3.6, §6): skipped slots, stale completions. */
describe('fire path: what is reported', () => {
  it('a runner reports the partitions it consumes once it takes their jobs, and that it stopped at close', async () => {
    const cluster = await fire.cluster({ partitions: 3 });
    const { reported, observer } = watchers();
    const runner = await cluster.runner({}, { observer, serve: [0, 2] });
    expect(reported.consuming).toEqual([{ partitions: [0, 2], on: true }]);
    await runner.close();
    expect(reported.consuming).toEqual([
      { partitions: [0, 2], on: true },
      { partitions: [0, 2], on: false },
    ]);
  });

  it('a runner closed before it started reports nothing: another runner’s partitions stay counted', async () => {
    const cluster = await fire.cluster();
    const { reported, observer } = watchers();
    const idle = new TimerRunner({ connection: fire.url(), prefix: cluster.prefix, handlers: {}, observer });
    await idle.close();
    expect(reported.consuming).toEqual([]);
  });

  it('an interval brought back after downtime runs once, late, and counts the slots it missed', async () => {
    const cluster = await fire.cluster();
    const { reported, observer } = watchers();
    const tick = recorder();
    await cluster.dispatcher();
    const timer = await cluster.timers.schedule({ key: 'i', handler: 'tick', every: '300ms' });
    // No worker until at least two more slots have passed (an outage).
    await waitFor(async () => (await cluster.redisNow()) >= timer.dueAt + 700, {
      intervalMs: 20,
      what: 'late',
    });
    await cluster.runner({ tick: tick.handler }, { observer });
    const skipped = await eventually(cluster.events, { type: 'skipped', key: 'i' });
    expect(tick.calls[0].due).toBe(timer.dueAt);
    expect(skipped).toMatchObject({ reason: 'missed', version: 1 });
    expect(skipped.count).toBeGreaterThanOrEqual(2);
    await waitFor(() => reported.skipped.length > 0, { what: 'the skip reported' });
    expect(reported.skipped[0]).toEqual({ reason: 'missed', count: skipped.count });
    // Nothing is made up: the next run is on the grid, after the missed slots.
    const next = await cluster.timers.get('i');
    expect((next!.dueAt - timer.dueAt) % 300).toBe(0);
    expect(next!.dueAt).toBeGreaterThan(timer.dueAt + 300 * skipped.count!);
  });

  it("catchup 'skip' brought back after downtime runs none of the late slots and reports them missed", async () => {
    const cluster = await fire.cluster();
    const { reported, observer } = watchers();
    const tick = recorder();
    await cluster.dispatcher();
    const timer = await cluster.timers.schedule({
      key: 's',
      handler: 'tick',
      every: '300ms',
      catchup: 'skip',
    });
    await waitFor(async () => (await cluster.redisNow()) >= timer.dueAt + 700, {
      intervalMs: 20,
      what: 'late',
    });
    await cluster.runner({ tick: tick.handler }, { observer });
    const skipped = await eventually(cluster.events, { type: 'skipped', key: 's' });
    expect(skipped).toMatchObject({ reason: 'missed', version: 1 });
    expect(skipped.count).toBeGreaterThanOrEqual(3);
    await waitFor(() => reported.skipped.length > 0, { what: 'the skip reported' });
    expect(reported.skipped[0]).toEqual({ reason: 'missed', count: skipped.count });
    // none of the late slots ran: the first run is on the first slot after them
    await waitFor(() => tick.calls.length > 0, { what: 'the first run' });
    expect(tick.calls[0].due).toBe(timer.dueAt + 300 * skipped.count!);
  });

  it('an awaitTask: false interval counts, at its late claim, the slots it missed', async () => {
    const cluster = await fire.cluster();
    const { reported, observer } = watchers();
    const tick = recorder();
    await cluster.dispatcher();
    const timer = await cluster.timers.schedule({
      key: 'f',
      handler: 'tick',
      every: '300ms',
      awaitTask: false,
    });
    await waitFor(async () => (await cluster.redisNow()) >= timer.dueAt + 700, {
      intervalMs: 20,
      what: 'late',
    });
    await cluster.runner({ tick: tick.handler }, { observer });
    const skipped = await eventually(cluster.events, { type: 'skipped', key: 'f' });
    expect(skipped).toMatchObject({ reason: 'missed', version: 1 });
    expect(skipped.count).toBeGreaterThanOrEqual(2);
    await waitFor(() => reported.skipped.length > 0, { what: 'the skip reported' });
    expect(reported.skipped[0]).toEqual({ reason: 'missed', count: skipped.count });
  });

  it('a run whose timer was cancelled meanwhile is a stale completion: counted and logged with its timer', async () => {
    const cluster = await fire.cluster();
    const { reported, observer, lines, logger } = watchers();
    const inRun = gate();
    const release = gate();
    await cluster.dispatcher();
    await cluster.runner(
      {
        slow: async () => {
          inRun.open();
          await release.promise;
        },
      },
      { observer, logger },
    );
    const timer = await cluster.timers.schedule({ key: 's', handler: 'slow', delay: 0 });
    await inRun.promise;
    await cluster.timers.cancel('s');
    release.open();
    await eventually(cluster.events, { type: 'stale', key: 's' });
    await waitFor(() => reported.stale.length > 0, { what: 'the stale completion reported' });
    expect(reported.stale).toEqual([{ reason: 'gone', phase: 'complete' }]);
    // counted by what its completion recorded: stale (its outcome was dropped), not ok
    expect(reported.runFinished).toEqual([expect.objectContaining({ handler: 'slow', status: 'stale' })]);
    expect(lines).toContainEqual({
      level: 'info',
      message: 'run ended after its timer was cancelled (stale: gone): its outcome was not recorded',
      fields: {
        ...{
          key: 's',
          id: timer.id,
          version: 1,
          partition: 0,
          handler: 'slow',
          reason: 'gone',
          outcome: 'ok',
        },
        latenessMs: expect.any(Number),
        durationMs: expect.any(Number),
      },
    });
  });

  it("a run aborted by its timer's cancel (its handler threw AbortError) is logged as ended after the cancel, not as failed", async () => {
    const cluster = await fire.cluster();
    const { reported, observer, lines, logger } = watchers();
    const inRun = gate();
    await cluster.dispatcher();
    await cluster.runner(
      {
        // waits for its signal, then throws what aborted it, as a handler passing ctx.signal to fetch does
        aborted: (_payload, ctx) =>
          new Promise((_resolve, reject) => {
            ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error));
            inRun.open();
          }),
      },
      { observer, logger },
    );
    const timer = await cluster.timers.schedule({ key: 'a', handler: 'aborted', delay: 0 });
    await inRun.promise;
    await cluster.timers.cancel('a');
    await eventually(cluster.events, { type: 'stale', key: 'a' });
    await waitFor(() => reported.stale.length > 0, { what: 'the stale completion reported' });
    // sundial_runs_total counts what its completion recorded, as the ledger, the span and the line do: stale,
    // not failed (a bulk cancel of running timers must not raise SundialRunFailureRatioHigh)
    expect(reported.runFinished).toEqual([expect.objectContaining({ handler: 'aborted', status: 'stale' })]);
    expect(reported.stale).toEqual([{ reason: 'gone', phase: 'complete' }]);
    expect(lines.filter((line) => line.level === 'warn' || line.level === 'error')).toEqual([]);
    expect(lines).toContainEqual({
      level: 'info',
      message: 'run ended after its timer was cancelled (stale: gone): its outcome was not recorded',
      fields: expect.objectContaining({
        key: 'a',
        id: timer.id,
        reason: 'gone',
        outcome: 'failed',
        error: expect.objectContaining({ message: expect.any(String) }),
      }),
    });
  });

  it('a fire job whose timer changed before its claim is a stale claim: counted, never run', async () => {
    const cluster = await fire.cluster();
    const { reported, observer } = watchers();
    const tick = recorder();
    const timer = await cluster.timers.schedule({ key: 'c', handler: 'tick', delay: 0 });
    await cluster.timers.cancel('c');
    await cluster
      .queueOf('c')
      .add('fire', { timers: [{ id: timer.id, key: 'c', version: 1, due: timer.dueAt }] });
    await cluster.runner({ tick: tick.handler }, { observer });
    await waitFor(() => reported.stale.length > 0, { what: 'the stale claim reported' });
    expect(reported.stale).toEqual([{ reason: 'gone', phase: 'claim' }]);
    expect(tick.calls).toEqual([]);
    // The claim published its stale event; over pub/sub it may come after the claim's answer was reported.
    await eventually(cluster.events, { type: 'stale', key: 'c' });
    expect(matching(cluster.events, { type: 'stale', key: 'c' })).toHaveLength(1);
  });
});
