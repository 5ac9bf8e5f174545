import { waitFor } from '@sundial/testing/harness';
import { claimAndDie, leaseExpired, recorder, refOf, story, useFirePath, work } from './fire-fixture';

const fire = useFirePath();

describe('ledger (docs/spec.md §3.9) on Redis with a real TimerRunner', () => {
  it('a replace while a run is in flight: the run’s completion is recorded stale, with its version and reason, in order', async () => {
    const cluster = await fire.cluster();
    const handler = recorder((ctx) => work(ctx.signal, 10_000));
    await cluster.dispatcher();
    const runner = await cluster.runner({ h: handler.handler }, { workerId: 'w-1' });
    await cluster.timers.schedule({ key: 'race', handler: 'h', delay: 0 });
    await waitFor(async () => (await cluster.timers.get('race'))?.status === 'running');
    await cluster.timers.schedule({ key: 'race', handler: 'h', delay: '1h', ifExists: 'replace' });
    const entries = await waitFor(async () => {
      const history = await cluster.timers.history('race');
      return history.some((entry) => entry.event === 'stale') && history;
    });
    expect(story(entries)).toEqual([
      ['scheduled', 1],
      ['armed', 1],
      ['claimed', 1],
      ['replaced', 2],
      ['scheduled', 1],
      ['stale', 1, 'gone'],
    ]);
    const [stale, , , claimed] = entries;
    expect(claimed.workerId).toBe(runner.workerId);
    // the replaced timer's run ending late: its worker named, as its claim
    expect(stale).toEqual({
      at: expect.any(String),
      event: 'stale',
      version: 1,
      workerId: runner.workerId,
      reason: 'gone',
    });
    expect(Date.parse(stale.at)).toBeGreaterThanOrEqual(Date.parse(claimed.at));
    expect(handler.calls[0].signal.aborted).toBe(true);
  });

  it('a reschedule while the fire job is in flight: its claim is recorded stale (version), then nothing runs', async () => {
    const cluster = await fire.cluster();
    const handler = recorder(() => undefined);
    // Handed over before the due, the job waits while the timer is rescheduled; the runner comes only
    // once the due has passed and claims at once. (A runner there all along claims at the due: a
    // reschedule slowed past it on a loaded host met a claimed timer.)
    await cluster.dispatcher({ leadMs: 900 });
    const timer = await cluster.timers.schedule({ key: 'moved', handler: 'h', delay: 1_500 });
    await waitFor(async () => (await cluster.timers.history('moved'))[0].event === 'armed', {
      timeoutMs: 5_000, // a deadline, left as soon as it holds
    });
    await cluster.timers.reschedule('moved', { delay: '1h' });
    await waitFor(async () => (await cluster.redisNow()) >= timer.dueAt, { what: 'the first due passed' });
    await cluster.runner({ h: handler.handler }, { workerId: 'w-2' });
    const entries = await waitFor(async () => {
      const history = await cluster.timers.history('moved');
      return history[0].event === 'stale' && history;
    });
    expect(story(entries)).toEqual([
      ['scheduled', 1],
      ['armed', 1],
      ['rescheduled', 2],
      ['stale', 1, 'version'],
    ]);
    expect(entries[0].workerId).toBe('w-2');
    expect(handler.calls).toHaveLength(0);
  });

  it('a replaced timer’s job claimed after the new timer’s hand-off: its stale entry comes after that hand-off', async () => {
    const cluster = await fire.cluster();
    const handler = recorder(() => undefined);
    // Both timers handed over 900 ms before their due, with no runner yet: two fire jobs wait.
    await cluster.dispatcher({ leadMs: 900 });
    const newest = async () => (await cluster.timers.history('handed'))[0].event;
    const deadline = { timeoutMs: 5_000 }; // a deadline, left as soon as it holds
    await cluster.timers.schedule({ key: 'handed', handler: 'h', delay: 1_500 });
    await waitFor(async () => (await newest()) === 'armed', deadline);
    const fresh = await cluster.timers.schedule({
      key: 'handed',
      handler: 'h',
      delay: 1_500,
      ifExists: 'replace',
    });
    await waitFor(async () => (await newest()) === 'armed', deadline);
    await waitFor(async () => (await cluster.redisNow()) >= fresh.dueAt, deadline);
    await cluster.runner({ h: handler.handler }, { workerId: 'w-5' });
    const entries = await waitFor(async () => {
      const history = await cluster.timers.history('handed');
      return history.some(({ event }) => event === 'stale') && history[0].event === 'completed' && history;
    });
    // the old job's claim and the new run's come in either order: each entry once, in time order
    const ats = entries.map(({ at }) => Date.parse(at));
    expect(ats).toEqual([...ats].sort((a, b) => b - a));
    expect(story(entries).slice(0, 5)).toEqual([
      ['scheduled', 1],
      ['armed', 1],
      ['replaced', 2],
      ['scheduled', 1],
      ['armed', 1],
    ]);
    expect(story(entries).slice(5).sort()).toEqual([
      ['claimed', 1],
      ['completed', 1],
      ['stale', 1, 'gone'],
    ]);
    expect(handler.calls.map(({ id }) => id)).toEqual([fresh.id]);
  });

  it('a run’s hand-off and claim are in history while it runs; at its end the ledger holds each entry once', async () => {
    const cluster = await fire.cluster();
    let finish = (): void => undefined;
    const handler = recorder(() => new Promise<void>((resolve) => (finish = resolve)));
    await cluster.dispatcher();
    await cluster.runner({ h: handler.handler }, { workerId: 'w-4' });
    const timer = await cluster.timers.schedule({ key: 'flight', handler: 'h', delay: 0 });
    await waitFor(async () => handler.calls.length === 1);
    const running = await cluster.timers.history('flight');
    expect(story(running)).toEqual([
      ['scheduled', 1],
      ['armed', 1],
      ['claimed', 1],
    ]);
    expect(running[0]).toMatchObject({ workerId: 'w-4', due: expect.any(String) });
    expect(await cluster.timers.history('flight', { limit: 1 })).toEqual(running.slice(0, 1));
    finish();
    const ended = await waitFor(async () => {
      const history = await cluster.timers.history('flight');
      return history[0].event === 'completed' && history;
    });
    expect(ended.slice(1)).toEqual(running);
    // As stored (the fire path joins these entries as text): integers as numbers, the worker as a string;
    // a removed one-shot's whole life in one closed ledger (oldest first, one per line), no list.
    const closed = (await fire.raw.get(cluster.timers.keys.closedLedger('flight'))) ?? '';
    const at = expect.any(Number) as number;
    expect(closed.split('\n').map((text) => JSON.parse(text) as unknown)).toEqual([
      { a: at, e: 'scheduled', v: 1 },
      { a: at, e: 'armed', v: 1, d: timer.dueAt },
      { a: at, e: 'claimed', v: 1, w: 'w-4', d: timer.dueAt },
      { a: at, e: 'completed', v: 1, w: 'w-4', d: timer.dueAt },
    ]);
    expect(await fire.raw.exists(cluster.timers.keys.ledger('flight'))).toBe(0);
    expect(await fire.raw.pttl(cluster.timers.keys.closedLedger('flight'))).toBeGreaterThan(
      604_800_000 - 60_000,
    );
    // The key scheduled again goes on in the same ledger, its new 'scheduled' entry written once: the
    // closed ledger goes into the list under it.
    await cluster.timers.schedule({ key: 'flight', handler: 'h', delay: 0 });
    await waitFor(async () => handler.calls.length === 2);
    finish();
    const again = await waitFor(async () => {
      const history = await cluster.timers.history('flight');
      return history.length === 8 && history[0].event === 'completed' && history;
    });
    expect(story(again)).toEqual([
      ['scheduled', 1],
      ['armed', 1],
      ['claimed', 1],
      ['completed', 1],
      ['scheduled', 1],
      ['armed', 1],
      ['claimed', 1],
      ['completed', 1],
    ]);
  });

  it('a worker id JSON must escape is stored as it is in the claimed and completed entries', async () => {
    const cluster = await fire.cluster();
    const workerId = 'w "quoted" \\ é\n';
    const timer = await cluster.timers.schedule({ key: 'odd-worker', handler: 'h', delay: 0 });
    await waitFor(async () => (await cluster.redisNow()) >= timer.dueAt, { intervalMs: 5, what: 'due' });
    const [claim] = await cluster.commands.claim(0, 30_000, workerId, [refOf(timer)]);
    expect(claim.kind).toBe('claimed');
    const run = { id: timer.id, key: 'odd-worker', version: 1, runCount: 1, missed: 0, overlap: 0 };
    await cluster.commands.complete(0, [{ ...run, mode: 'held', outcome: 'ok' }]);
    const history = await cluster.timers.history('odd-worker');
    expect(history.map(({ event, workerId: by }) => [event, by])).toEqual([
      ['completed', workerId],
      ['claimed', workerId],
      ['scheduled', undefined],
    ]);
  });

  it('a failed interval run: claimed and failed carry the worker, the message and the version', async () => {
    const cluster = await fire.cluster();
    await cluster.dispatcher();
    await cluster.runner(
      {
        h: () => {
          throw new Error('boom');
        },
      },
      { workerId: 'w-3' },
    );
    await cluster.timers.schedule({ key: 'fails', handler: 'h', every: 200, removeOnComplete: false });
    const entries = await waitFor(async () => {
      const history = await cluster.timers.history('fails');
      return history[0].event === 'failed' && history;
    });
    expect(story(entries)).toEqual([
      ['scheduled', 1],
      ['armed', 1],
      ['claimed', 1],
      ['failed', 1],
    ]);
    expect(entries[0]).toMatchObject({ workerId: 'w-3', message: 'boom', due: expect.any(String) });
    expect((await cluster.timers.describe('fails')).counters).toEqual({
      runs: 1,
      failures: 1,
      stale: 0,
      skipped: 0,
      lost: 0,
      requeued: 0,
    });
  });

  // counters.lost counted a requeued run (it runs again) as lost, while sundial_runs_lost_total counts
  // only the at-most-once runs recorded failed: now each is counted where its metric counts it.
  it.each([
    ['at-least-once', ['lost', 1, 'requeued'], 'dead-worker', { lost: 0, requeued: 1 }],
    ['at-most-once', ['lost', 1, 'lost'], 'dead-worker', { lost: 1, requeued: 0 }],
  ] as const)(
    '%s: a dead worker’s expired lease is recorded lost by the reconciler',
    async (delivery, lost, worker, counted) => {
      const cluster = await fire.cluster();
      const timer = await cluster.timers.schedule({
        key: 'k',
        handler: 'h',
        delay: 0,
        delivery,
        removeOnComplete: false,
      });
      await claimAndDie(cluster, timer, 50, worker);
      await leaseExpired(cluster, fire.raw, 'k');
      await cluster.reconciler().reconcileOnce();
      const entries = await cluster.timers.history('k');
      expect(story(entries)).toEqual([['scheduled', 1], ['claimed', 1], lost]);
      expect(entries[0].workerId).toBe(worker);
      expect((await cluster.timers.describe('k')).counters).toMatchObject({ runs: 1, ...counted });
    },
  );
});
