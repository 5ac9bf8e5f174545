/**
 * docs/spec.md §3.2 and §3.3b on every backend: a run whose handler no worker has fails with reason
 * `unknown-handler`, and that failure is handled as any other — a cron goes on to its next slot, retry tries
 * its slot again, pauseAfterFailures pauses it after N failed slots in a row — exactly as when its handler
 * throws. Each case runs twice: the timer names `gone` (a handler the backend lacks when its runs come)
 * and `work` throwing.
 *
 * The tests run side by side (`it.concurrent`), each on its own timers, dispatcher and runner.
 */
import type { TimerEvent, TimerSpec } from '@sundial/core';
import { BACKENDS, type Harness, useBackend } from './backends';

// deadline (backend time: virtual on the engine, real on Redis): each wait is left as soon as its outcome shows
const WITHIN = { within: 12_000 };
/** A cron on every whole second. */
const EVERY_SECOND = { cron: '* * * * * *', tz: 'UTC' } as const;
const HANDLERS = ['gone', 'throwing'] as const;
type HandlerCase = (typeof HANDLERS)[number];
type Spec = Omit<TimerSpec, 'handler'>;

describe.each(BACKENDS)('%s backend: a handler no worker has fails its run like a throw', (name) => {
  const backend = useBackend(name);

  /**
   * Opens a harness and schedules `spec` (without its handler; or made from the backend's now) naming the
   * case's handler. The engine refuses an unknown handler at schedule: it has `gone` then, and loses it
   * before the first run (it looks handlers up at each run). A Redis runner never has it.
   */
  async function scheduled(handler: HandlerCase, specOf: Spec | ((now: number) => Spec)): Promise<Harness> {
    const h = await backend.open({ handlers: name === 'memory' ? { gone: () => {} } : {} });
    const spec = typeof specOf === 'function' ? specOf(await h.now()) : specOf;
    await h.timers.schedule(
      handler === 'gone'
        ? { ...spec, handler: 'gone' }
        : { ...spec, handler: 'work', payload: { fail: 'nope' } },
    );
    h.removeHandler('gone');
    return h;
  }

  const reasonOf = (handler: HandlerCase) => (handler === 'gone' ? 'unknown-handler' : undefined);
  const failures = (events: TimerEvent[]) => events.map((event) => [event.version, event.error?.reason]);

  it.concurrent.each(HANDLERS)(
    'a cron (%s) goes on slot after slot, each failed, never ended',
    async (handler) => {
      const h = await scheduled(handler, { key: 'c', ...EVERY_SECOND });
      const failed = await h.eventsOnceCome('failed', 3, WITHIN);
      const reason = reasonOf(handler);
      expect(failures(failed.slice(0, 3))).toEqual([
        [1, reason],
        [2, reason],
        [3, reason],
      ]);
      // no failed event says the timer ended (`no-next-slot`): it waits, pending, for its next slot
      expect(failed.map((event) => event.reason)).toEqual(failed.map(() => undefined));
      const row = await h.until(
        async () => {
          const timer = await h.timers.get('c');
          // (between two slots: not read while the next one runs)
          return timer?.status === 'pending' && timer.version >= 4 && timer;
        },
        { what: 'the cron pending for its fourth slot' },
      );
      expect(row).toMatchObject({ last: { status: 'failed' } });
      expect(row.last?.error?.reason).toBe(reason);
      expect(h.eventsOf('paused')).toEqual([]);
    },
  );

  it.concurrent.each(HANDLERS)(
    'a cron (%s) with pauseAfterFailures: 3 is paused after its third failed slot',
    async (handler) => {
      const h = await scheduled(handler, { key: 'p', ...EVERY_SECOND, pauseAfterFailures: 3 });
      const paused = await h.event({ type: 'paused', key: 'p' }, WITHIN);
      expect(paused).toMatchObject({ reason: 'failures', count: 3, version: 4 });
      const reason = reasonOf(handler);
      expect(failures(h.eventsOf('failed'))).toEqual([
        [1, reason],
        [2, reason],
        [3, reason],
      ]);
      expect(await h.timers.get('p')).toMatchObject({ status: 'paused', version: 4 });
    },
  );

  it.concurrent.each(HANDLERS)(
    'a cron (%s) with retry tries each slot again, then goes on; its retried slots count once each',
    async (handler) => {
      const h = await scheduled(handler, {
        key: 'r',
        ...EVERY_SECOND,
        retry: { attempts: 2, backoff: { type: 'fixed', delay: 100 } },
        pauseAfterFailures: 2,
      });
      expect(await h.event({ type: 'paused', key: 'r' }, WITHIN)).toMatchObject({
        reason: 'failures',
        count: 2,
      });
      const failed = h.eventsOf('failed');
      expect(failed.map((event) => [event.attempt, event.error?.reason])).toEqual(
        [1, 2, 1, 2].map((attempt) => [attempt, reasonOf(handler)]),
      );
      expect(await h.timers.get('r')).toMatchObject({ status: 'paused', runCount: 2 });
    },
  );

  const ALLOW: [HandlerCase, string, Spec][] = HANDLERS.flatMap((handler) => [
    [handler, 'interval', { key: 'a', every: 200, overlap: 'allow', pauseAfterFailures: 3 }],
    [handler, 'cron', { key: 'a', ...EVERY_SECOND, overlap: 'allow', pauseAfterFailures: 3 }],
  ]);

  it.concurrent.each(ALLOW)(
    "(%s) an 'allow' %s, its runs free, with pauseAfterFailures: 3 is paused after three failed runs",
    async (handler, _kind, spec) => {
      const h = await scheduled(handler, spec);
      expect(await h.event({ type: 'paused', key: 'a' }, WITHIN)).toMatchObject({
        reason: 'failures',
        count: 3,
      });
      const failed = h.eventsOf('failed');
      expect(failed.slice(0, 3).map((event) => event.error?.reason)).toEqual(
        [1, 2, 3].map(() => reasonOf(handler)),
      );
      expect(await h.timers.get('a')).toMatchObject({ status: 'paused', awaitTask: false });
    },
  );

  it.concurrent.each(HANDLERS)(
    'a cron (%s) whose endAt comes before its next slot ends failed after its run: the endAt ends it',
    async (handler) => {
      let endAt = 0;
      const h = await scheduled(handler, (now) => {
        // the slot four whole seconds on and the ones before it come before the endAt, none after it; at
        // least 3 s for the call to land before the first slot (a first slot after endAt is refused)
        endAt = Math.floor(now / 1_000) * 1_000 + 4_500;
        return { key: 'e', ...EVERY_SECOND, endAt, removeOnComplete: false, pauseAfterFailures: 5 };
      });
      const row = await h.until(
        async () => {
          const timer = await h.timers.get('e');
          return timer?.status === 'failed' && timer;
        },
        { ...WITHIN, what: 'the timer to end' },
      );
      expect(row).toMatchObject({ endAt, last: { status: 'failed' } });
      expect(row.last?.error?.reason).toBe(reasonOf(handler));
      const failed = await h.eventsOnceCome('failed', row.runCount);
      // the last run's failed event says the endAt ended the timer, not its failure
      expect(failed.map((event) => event.reason)).toEqual([...failed.slice(1).map(() => undefined), 'ended']);
      expect(h.eventsOf('paused')).toEqual([]);
    },
  );

  it.concurrent('a handler name one letter off names the handler it has: did you mean "work"?', async () => {
    // the engine has the typo at schedule (it refuses a name it lacks there), then loses it
    const h = await backend.open({ handlers: name === 'memory' ? { wrok: () => {} } : {} });
    await h.timers.schedule({ key: 't', handler: 'wrok', delay: 0, removeOnComplete: false });
    h.removeHandler('wrok');
    const [failed] = await h.eventsOnceCome('failed', 1, WITHIN);
    expect(failed.error).toMatchObject({
      reason: 'unknown-handler',
      message: `no handler named "wrok" is registered with this ${name === 'memory' ? 'engine' : 'worker'} (did you mean "work"?)`,
    });
  });
});
