import type { LedgerEntry } from '@sundial/core';
import { RedisTimers } from '@sundial/redis';
import { waitFor } from '@sundial/testing';
import { recorder, refOf, useFirePath, work } from './fire-fixture';

const fire = useFirePath();

/** Oldest first, as `[event, version, reason?]`: the order things happened in. */
const story = (entries: LedgerEntry[]) =>
  [...entries]
    .reverse()
    .map(({ event, version, reason }) => (reason ? [event, version, reason] : [event, version]));

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
    expect(stale).toEqual({ at: expect.any(String), event: 'stale', version: 1, reason: 'gone' });
    expect(Date.parse(stale.at)).toBeGreaterThanOrEqual(Date.parse(claimed.at));
    expect(handler.calls[0].signal.aborted).toBe(true);
  });

  it('a reschedule while the fire job is in flight: its claim is recorded stale (version), then nothing runs', async () => {
    const cluster = await fire.cluster();
    const handler = recorder(() => undefined);
    // Handed over 900 ms before the due: the job waits in the runner while the timer is rescheduled.
    await cluster.dispatcher({ leadMs: 900 });
    await cluster.runner({ h: handler.handler }, { workerId: 'w-2' });
    await cluster.timers.schedule({ key: 'moved', handler: 'h', delay: 1_500 });
    await waitFor(async () => (await cluster.timers.history('moved'))[0].event === 'armed', {
      timeoutMs: 5_000,
    });
    await cluster.timers.reschedule('moved', { delay: '1h' });
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
    });
  });

  it('cancelAll of timers with no ledger list writes none: history shows each cancel, with the kept hand-off', async () => {
    const cluster = await fire.cluster();
    // Handed over 900 ms before its due, with no runner: the hand-off is kept on the row (`lq`).
    await cluster.dispatcher({ leadMs: 900 });
    await cluster.timers.schedule({ key: 'bulk:armed', handler: 'h', delay: 1_500 });
    await cluster.timers.schedule({ key: 'bulk:fresh', handler: 'h', delay: '1h' });
    await waitFor(async () => (await cluster.timers.history('bulk:armed'))[0].event === 'armed', {
      timeoutMs: 5_000,
    });
    expect(await cluster.timers.cancelAll('bulk:')).toBe(2);
    for (const key of ['bulk:armed', 'bulk:fresh']) {
      expect(await fire.raw.exists(cluster.timers.keys.ledger(key))).toBe(0);
    }
    const armed = await cluster.timers.history('bulk:armed');
    expect(story(armed)).toEqual([
      ['scheduled', 1],
      ['armed', 1],
      ['cancelled', 2, 'cancelled'],
    ]);
    expect(story(await cluster.timers.history('bulk:fresh'))).toEqual([
      ['scheduled', 1],
      ['cancelled', 2, 'cancelled'],
    ]);
    expect(await cluster.timers.history('bulk:armed', { limit: 1 })).toEqual(armed.slice(0, 1));
    // Scheduled again, the key goes on in the same ledger: the derived entries are written under the new one.
    await cluster.timers.schedule({ key: 'bulk:armed', handler: 'h', delay: '1h' });
    await cluster.timers.pause('bulk:armed');
    expect(story(await cluster.timers.history('bulk:armed'))).toEqual([
      ['scheduled', 1],
      ['armed', 1],
      ['cancelled', 2, 'cancelled'],
      ['scheduled', 1],
      ['paused', 2],
    ]);
    expect(await fire.raw.pttl(cluster.timers.keys.ledger('bulk:armed'))).toBe(-1);
  });

  it('a global cancelAll over timers with and without a list: each cancel recorded once, reason reset', async () => {
    const cluster = await fire.cluster();
    // A list, then a hand-off kept on the row: both go into the list with the cancel.
    await cluster.dispatcher({ leadMs: 900 });
    await cluster.timers.schedule({ key: 'r:listed', handler: 'h', delay: '1h' });
    await cluster.timers.pause('r:listed');
    await cluster.timers.reschedule('r:listed', { delay: 1_500 });
    await waitFor(async () => (await cluster.timers.history('r:listed'))[0].event === 'armed', {
      timeoutMs: 5_000,
    });
    await cluster.timers.schedule({ key: 'r:fresh', handler: 'h', delay: '1h' });
    expect(await cluster.timers.cancelAll()).toBe(2);
    expect(story(await cluster.timers.history('r:listed'))).toEqual([
      ['scheduled', 1],
      ['paused', 2],
      ['rescheduled', 3],
      ['armed', 3],
      ['cancelled', 4, 'reset'],
    ]);
    expect(await fire.raw.llen(cluster.timers.keys.ledger('r:listed'))).toBe(5);
    expect(story(await cluster.timers.history('r:fresh'))).toEqual([
      ['scheduled', 1],
      ['cancelled', 2, 'reset'],
    ]);
    const tombstoneEnd = await fire.raw.pexpiretime(cluster.timers.keys.tombstone('r:fresh'));
    expect(await fire.raw.exists(cluster.timers.keys.cancelRecord('r:fresh', tombstoneEnd))).toBe(1);
    await cluster.timers.schedule({ key: 'r:fresh', handler: 'h', delay: '1h' });
    expect(story(await cluster.timers.history('r:fresh'))).toEqual([
      ['scheduled', 1],
      ['cancelled', 2, 'reset'],
      ['scheduled', 1],
    ]);
  });

  it('a cancelAll whose record ms another call holds writes each key’s entries to its list', async () => {
    const cluster = await fire.cluster();
    const tombstoneMs = 60_000;
    const timers = new RedisTimers({ connection: fire.url(), prefix: cluster.prefix, tombstoneMs });
    try {
      await timers.schedule({ key: 'taken:listed', handler: 'h', delay: '1h' });
      await timers.pause('taken:listed');
      await timers.resume('taken:listed');
      await timers.schedule({ key: 'taken:fresh', handler: 'h', delay: '1h' });
      // Another call's records (another reason) on every ms this cancelAll's tombstones may expire at.
      const from = (await cluster.redisNow()) + tombstoneMs;
      const taken = fire.raw.pipeline();
      for (let ms = from; ms < from + 10_000; ms++) {
        taken.set(timers.keys.cancelRecord('taken:fresh', ms), '{"a":0,"r":"reset"}', 'PX', tombstoneMs * 2);
      }
      await taken.exec();
      expect(await timers.cancelAll('taken:')).toBe(2);
      const end = await fire.raw.pexpiretime(timers.keys.tombstone('taken:fresh'));
      expect(end - from).toBeLessThan(10_000);
      expect(await fire.raw.llen(timers.keys.ledger('taken:fresh'))).toBe(2);
      expect(await fire.raw.pexpiretime(timers.keys.ledger('taken:fresh'))).toBeGreaterThan(from);
      expect(story(await timers.history('taken:fresh'))).toEqual([
        ['scheduled', 1],
        ['cancelled', 2, 'cancelled'],
      ]);
      expect(story(await timers.history('taken:listed'))).toEqual([
        ['scheduled', 1],
        ['paused', 2],
        ['resumed', 3],
        ['cancelled', 4, 'cancelled'],
      ]);
    } finally {
      await timers.dispose();
    }
  });

  it('keeps the last `ledger` entries only', async () => {
    const cluster = await fire.cluster();
    const timers = new RedisTimers({ connection: fire.url(), prefix: cluster.prefix, ledger: 5 });
    try {
      await timers.schedule({ key: 'capped', handler: 'h', delay: '1h' });
      for (let i = 0; i < 4; i++) {
        await timers.pause('capped');
        await timers.resume('capped');
      }
      const entries = await timers.history('capped', { limit: 200 });
      expect(entries.map((entry) => [entry.event, entry.version])).toEqual([
        ['resumed', 9],
        ['paused', 8],
        ['resumed', 7],
        ['paused', 6],
        ['resumed', 5],
      ]);
      expect(await fire.raw.llen(timers.keys.ledger('capped'))).toBe(5);
      expect(await timers.history('capped', { limit: 2 })).toEqual(entries.slice(0, 2));
    } finally {
      await timers.dispose();
    }
  });

  it('ledger: 0 (SUNDIAL_LEDGER=off) writes no ledger; history of a live timer is empty', async () => {
    const cluster = await fire.cluster();
    const timers = new RedisTimers({ connection: fire.url(), prefix: cluster.prefix, ledger: 0 });
    try {
      await timers.schedule({ key: 'quiet', handler: 'h', delay: '1h' });
      await timers.pause('quiet');
      await timers.cancel('quiet');
      expect(await fire.raw.exists(timers.keys.ledger('quiet'))).toBe(0);
      expect(await timers.history('quiet')).toEqual([]);
      await expect(timers.history('never')).rejects.toMatchObject({ reason: 'not-found' });
    } finally {
      await timers.dispose();
    }
  });

  it('costs a pending timer nothing: its first entry is implied by the row (MEMORY USAGE with and without)', async () => {
    const cluster = await fire.cluster();
    const off = new RedisTimers({ connection: fire.url(), prefix: `${cluster.prefix}off`, ledger: 0 });
    try {
      const spec = { handler: 'h', delay: '30d' as const, payload: { invoice: 42 } };
      await cluster.timers.schedule({ ...spec, key: 'mem:1' });
      await off.schedule({ ...spec, key: 'mem:1' });
      const usage = (name: string) =>
        fire.raw.call('MEMORY', 'USAGE', name, 'SAMPLES', '0') as Promise<number | null>;
      const withLedger = await usage(cluster.timers.keys.row('mem:1'));
      expect(await usage(cluster.timers.keys.ledger('mem:1'))).toBeNull();
      expect(await usage(off.keys.row('mem:1'))).toBe(withLedger);
      expect(await cluster.timers.history('mem:1')).toEqual([
        expect.objectContaining({ event: 'scheduled', version: 1 }),
      ]);
      // The first change writes the implied entry under its own: two small entries.
      await cluster.timers.pause('mem:1');
      expect(await fire.raw.llen(cluster.timers.keys.ledger('mem:1'))).toBe(2);
      expect(await usage(cluster.timers.keys.ledger('mem:1'))).toBeLessThan(250);
    } finally {
      await off.dispose();
    }
  });

  it.each([
    ['at-least-once', ['lost', 1, 'requeued'], 'dead-worker'],
    ['at-most-once', ['lost', 1, 'lost'], 'dead-worker'],
  ] as const)(
    '%s: a dead worker’s expired lease is recorded lost by the reconciler',
    async (delivery, lost, worker) => {
      const cluster = await fire.cluster();
      const timer = await cluster.timers.schedule({
        key: 'k',
        handler: 'h',
        delay: 0,
        delivery,
        removeOnComplete: false,
      });
      await waitFor(async () => (await cluster.redisNow()) >= timer.dueAt, { intervalMs: 5 });
      const [claim] = await cluster.commands.claim(0, 50, worker, [refOf(timer)]);
      expect(claim.kind).toBe('claimed');
      const leases = cluster.timers.keys.leases(0);
      await waitFor(async () => Number(await fire.raw.zscore(leases, 'k')) < (await cluster.redisNow()), {
        intervalMs: 10,
      });
      await cluster.reconciler().reconcileOnce();
      const entries = await cluster.timers.history('k');
      expect(story(entries)).toEqual([['scheduled', 1], ['claimed', 1], lost]);
      expect(entries[0].workerId).toBe(worker);
      expect((await cluster.timers.describe('k')).counters).toMatchObject({ runs: 1, lost: 1 });
    },
  );
});
