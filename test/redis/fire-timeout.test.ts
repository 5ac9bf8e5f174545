import { RunTimeoutError, VirtualClock, withTimeout } from '@sundial/core';
import { eventually, matching, recorder, useFirePath } from './fire-fixture';
import { waitFor } from '@sundial/testing/harness';

const fire = useFirePath();

/**
 * docs/spec.md §3.2: a handler bounded by `withTimeout`, or a timer by its own `timeout`, on a TimerRunner,
 * over real Redis and BullMQ.
 */
describe('fire path: a run that outlives its timeout', () => {
  it("is recorded failed with reason 'timeout' at its timeout, its signal aborted, the lease let go", async () => {
    const cluster = await fire.cluster();
    // never ends, whatever its signal says: only the timeout can end the run
    const { calls, handler } = recorder(() => new Promise(() => undefined));
    await cluster.dispatcher();
    await cluster.runner({ stuck: withTimeout(handler, 300, { name: 'stuck' }) });
    await cluster.timers.schedule({ key: 'k', handler: 'stuck', delay: 0, removeOnComplete: false });
    const failed = await eventually(cluster.events, { type: 'failed', key: 'k' });
    expect(failed.error).toEqual({
      reason: 'timeout',
      message: "The handler 'stuck' did not end within 300 ms (its timeout); its signal was aborted.",
    });
    expect(calls).toHaveLength(1);
    expect(calls[0].signal.aborted).toBe(true);
    expect(calls[0].signal.reason).toBeInstanceOf(RunTimeoutError);
    const timer = await cluster.timers.get('k');
    expect(timer).toMatchObject({ status: 'failed', last: { status: 'failed', error: failed.error } });
    // the run lasted its timeout, not less (ended and started on the same cluster clock)
    expect(timer!.last!.ended! - timer!.last!.started).toBeGreaterThanOrEqual(300);
    // no lease is left behind for the reconciler to take as a lost worker
    expect(await fire.raw.zcard(`${cluster.prefix}:{p0}:leases`)).toBe(0);
  });

  it('keeps a cron going past runs that never end, each slot failing at its timeout', async () => {
    const cluster = await fire.cluster();
    const { calls, handler } = recorder(() => new Promise(() => undefined));
    await cluster.dispatcher();
    await cluster.runner({ stuck: withTimeout(handler, 200) });
    await cluster.timers.schedule({ key: 'tick', handler: 'stuck', cron: '* * * * * *', tz: 'UTC' });
    // without the timeout the first run holds the row for good and every later slot is skipped
    await waitFor(() => matching(cluster.events, { type: 'failed', key: 'tick' }).length >= 2, {
      timeoutMs: 5_000, // a deadline, left as soon as it holds
      what: 'two timed-out runs of the cron',
    });
    expect(matching(cluster.events, { type: 'failed', key: 'tick' })[1].error).toMatchObject({
      reason: 'timeout',
    });
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(new Set(calls.map((ctx) => ctx.due)).size).toBe(calls.length);
  });

  it("bounds a timer by its spec's timeout, read from the claim; with the handler's own, the first to elapse ends the run", async () => {
    const cluster = await fire.cluster();
    const { calls, handler } = recorder(() => new Promise(() => undefined));
    await cluster.dispatcher();
    await cluster.runner({
      plain: handler,
      bounded: withTimeout(handler, 200, { name: 'bounded' }),
      // (armed on a clock that never moves: nothing of it is left armed when the test ends)
      slow: withTimeout(handler, '5s', { name: 'slow', clock: new VirtualClock(0) }),
    });
    await cluster.timers.schedule({
      key: 'spec',
      handler: 'plain',
      delay: 0,
      timeout: 300,
      removeOnComplete: false,
    });
    const failed = await eventually(cluster.events, { type: 'failed', key: 'spec' });
    expect(failed.error).toEqual({
      reason: 'timeout',
      message: "The handler 'plain' did not end within 300 ms (its timer's timeout); its signal was aborted.",
    });
    expect(calls[0].signal.reason).toBeInstanceOf(RunTimeoutError);
    const timer = await cluster.timers.get('spec');
    expect(timer).toMatchObject({ status: 'failed', timeout: 300 });
    expect(timer!.last!.ended! - timer!.last!.started).toBeGreaterThanOrEqual(300);
    expect(await fire.raw.zcard(`${cluster.prefix}:{p0}:leases`)).toBe(0);

    // the handler's 200 ms ends a run before the timer's hour; the timer's 250 ms before the handler's 5 s
    await cluster.timers.schedule({ key: 'first', handler: 'bounded', delay: 0, timeout: '1h' });
    await cluster.timers.schedule({ key: 'second', handler: 'slow', delay: 0, timeout: 250 });
    const first = await eventually(cluster.events, { type: 'failed', key: 'first' });
    const second = await eventually(cluster.events, { type: 'failed', key: 'second' });
    expect(first.error?.message).toContain("'bounded' did not end within 200 ms (its timeout)");
    expect(second.error?.message).toContain("'slow' did not end within 250 ms (its timer's timeout)");
  });
});
