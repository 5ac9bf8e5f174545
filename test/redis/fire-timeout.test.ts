import { RunTimeoutError, withTimeout } from '@sundial/core';
import { eventually, matching, recorder, useFirePath } from './fire-fixture';
import { waitFor } from '@sundial/testing';

const fire = useFirePath();

/** docs/spec.md §3.2: a handler bounded by `withTimeout` on a TimerRunner, over real Redis and BullMQ. */
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
      timeoutMs: 5_000,
      what: 'two timed-out runs of the cron',
    });
    expect(matching(cluster.events, { type: 'failed', key: 'tick' })[1].error).toMatchObject({
      reason: 'timeout',
    });
    expect(calls.length).toBeGreaterThanOrEqual(2);
    expect(new Set(calls.map((ctx) => ctx.due)).size).toBe(calls.length);
  });
});
