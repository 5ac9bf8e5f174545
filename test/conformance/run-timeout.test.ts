/**
 * docs/spec.md §3.2 on every backend: a timer's own `timeout` bounds each of its runs — held, free and
 * trigger runs alike — and the operations keep it; a timer without one is not bounded.
 */
import { RunTimeoutError, type TimerContext, type TimerHandler } from '@sundial/core';
import { BACKENDS, type Harness, useBackend } from './backends';

const WITHIN = { within: 10_000 };
const CRON = { cron: '* * * * * *', tz: 'UTC' } as const;

/** A handler that never ends, whatever its signal says: only a timeout ends its run. */
function stuck(contexts: TimerContext[]): TimerHandler {
  return (_payload, ctx) => {
    contexts.push(ctx);
    return new Promise(() => undefined);
  };
}

/** The `failed` events of `key`, once `count` have come. */
async function failures(h: Harness, key: string, count: number) {
  return h.until(
    () => {
      const failed = h.eventsOf('failed').filter((event) => event.key === key);
      return failed.length >= count && failed;
    },
    { ...WITHIN, what: `${count} failed runs of ${key}` },
  );
}

describe.each(BACKENDS)('%s backend: a timer with a timeout', (name) => {
  const backend = useBackend(name);

  it("fails each run still going at its timeout with reason 'timeout', its signal aborted; the cron goes on", async () => {
    const contexts: TimerContext[] = [];
    const h = await backend.open({ handlers: { stuck: stuck(contexts) } });
    const timer = await h.timers.schedule({
      key: 'c',
      handler: 'stuck',
      ...CRON,
      timeout: '300ms',
      maxRuns: 2,
    });
    expect(timer.timeout).toBe(300);
    const failed = await failures(h, 'c', 2);
    expect(failed.map((event) => event.error)).toEqual([
      {
        reason: 'timeout',
        message:
          "The handler 'stuck' did not end within 300 ms (its timer's timeout); its signal was aborted.",
      },
      expect.objectContaining({ reason: 'timeout' }),
    ]);
    // without the timeout the first run would hold the cron for good, every later slot skipped
    expect(contexts.map((ctx) => ctx.version)).toEqual([1, 2]);
    expect(contexts[1].due).toBeGreaterThan(contexts[0].due);
    for (const ctx of contexts) expect(ctx.signal.reason).toBeInstanceOf(RunTimeoutError);
    expect(contexts[0].timer.timeout).toBe(300);
  });

  it('bounds a free run and a trigger run too', async () => {
    const contexts: TimerContext[] = [];
    const h = await backend.open({ handlers: { stuck: stuck(contexts) } });
    await h.timers.schedule({ key: 'free', handler: 'stuck', ...CRON, overlap: 'allow', timeout: 200 });
    await h.timers.schedule({ key: 'later', handler: 'stuck', delay: '1h', timeout: 200 });
    await h.timers.trigger('later');
    const [triggered] = await failures(h, 'later', 1);
    expect(triggered.error).toMatchObject({ reason: 'timeout' });
    // a trigger run does not move the schedule: the one-shot is still due in an hour
    expect(await h.timers.get('later')).toMatchObject({ status: 'pending', runCount: 1 });
    const [free] = await failures(h, 'free', 1);
    expect(free.error).toMatchObject({ reason: 'timeout' });
    await h.timers.cancel('free');
  });

  it('leaves a timer without a timeout, and a run that ends in time, as they were', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'slow', handler: 'work', delay: 0, payload: { sleepMs: 1_000 } }); // on the backend's clock: virtual for memory; a real short wait on Redis
    await h.timers.schedule({
      key: 'quick',
      handler: 'work',
      delay: 0,
      payload: { sleepMs: 100 },
      timeout: '5s',
    });
    const completed = await h.eventsOnceCome('completed', 2, WITHIN);
    expect(completed.map((event) => event.key).sort()).toEqual(['quick', 'slow']);
    expect(h.eventsOf('failed')).toEqual([]);
    expect(h.runs.some((run) => run.signal.aborted)).toBe(false);
    expect(h.runs.find((run) => run.key === 'slow')?.timer).not.toHaveProperty('timeout');
  });

  it('is kept by reschedule, pause, resume and trigger, and replaced with the spec by a replace', async () => {
    const h = await backend.open();
    await h.timers.schedule({ key: 'k', handler: 'work', every: '1h', timeout: '15m' });
    expect(await h.timers.reschedule('k', { delay: '2h' })).toMatchObject({ timeout: 900_000 });
    expect(await h.timers.pause('k')).toMatchObject({ timeout: 900_000 });
    expect(await h.timers.resume('k')).toMatchObject({ timeout: 900_000 });
    expect(await h.timers.trigger('k')).toMatchObject({ timeout: 900_000 });
    await h.event({ type: 'completed', key: 'k' });
    expect(await h.timers.get('k')).toMatchObject({ status: 'pending', timeout: 900_000 });
    const replaced = await h.timers.schedule({ key: 'k', handler: 'work', every: '1h', ifExists: 'replace' });
    expect(replaced).not.toHaveProperty('timeout');
    expect(await h.timers.get('k')).not.toHaveProperty('timeout');
    expect(
      await h.timers.schedule({
        key: 'k',
        handler: 'work',
        every: '1h',
        timeout: 60_000,
        ifExists: 'replace',
      }),
    ).toMatchObject({ timeout: 60_000 });
  });
});
