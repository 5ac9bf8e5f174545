import { createHash } from 'node:crypto';
import { scriptOfCall } from '@sundial/redis';
import { ReplyDropper } from '@sundial/testing/harness';
import { keysUnder, useStore } from './store-fixture';

const store = useStore();

/**
 * requestId on Redis (issue 8 defect 2, docs/design.md "Repeated calls"), beyond what the conformance
 * suite checks on both backends (test/conformance/request-ids.test.ts): batches over several calls,
 * refusals that store nothing, and a write whose reply was lost.
 */
describe('requestId on RedisTimers', () => {
  it('scheduleMany over several partitions and calls, retried: the same timers', async () => {
    const timers = store.open({ partitions: 4 });
    const specs = Array.from({ length: 250 }, (_, n) => ({
      key: `m:${n}`,
      handler: 'h',
      delay: '1h' as const,
    }));
    const first = await timers.scheduleMany(specs, { requestId: 'batch' });
    expect(await timers.scheduleMany(specs, { requestId: 'batch' })).toEqual(first);
    expect(await timers.snapshot()).toHaveLength(250);
  });

  it('schedule and scheduleMany retried: sundial_timers_scheduled_total counts each timer once', async () => {
    const kinds: string[] = [];
    const timers = store.open({
      partitions: 2,
      observer: { scheduled: ({ kind }) => void kinds.push(kind) },
    });
    const specs = ['a', 'b', 'c'].map((key) => ({ key, handler: 'h', every: '1h' as const }));
    for (let round = 0; round < 2; round++) {
      await timers.scheduleMany(specs, { requestId: 'many' });
      await timers.schedule({ key: 'd', handler: 'h', delay: '1h' }, { requestId: 'one' });
    }
    expect(kinds.sort()).toEqual(['interval', 'interval', 'interval', 'once']);
  });

  it('scheduleMany retried: kept rows, repeated and distinct dues answer as the first time', async () => {
    const timers = store.open();
    const kept = await timers.schedule({ key: 'k:0', handler: 'h', delay: '2h' });
    const at = Date.now() + 3_600_000;
    const specs = [
      { key: 'k:1', handler: 'h', at },
      { key: 'k:0', handler: 'h', at, ifExists: 'keep' as const },
      { key: 'k:2', handler: 'h', at },
      { key: 'k:3', handler: 'h', at },
      { key: 'k:4', handler: 'h', at: at + 5 },
      { key: 'k:5', handler: 'h', at },
    ];
    const first = await timers.scheduleMany(specs, { requestId: 'mixed' });
    expect(first.map((timer) => timer.dueAt)).toEqual([at, kept.dueAt, at, at, at + 5, at]);
    expect(first[1]).toEqual(kept);
    expect(await timers.scheduleMany(specs, { requestId: 'mixed' })).toEqual(first);
  });

  it('a refused call with an id stores nothing: no pin, no first answer', async () => {
    const timers = store.open();
    await timers.schedule({ key: 'a', handler: 'h', delay: '1h' });
    await timers.schedule({ key: 'b', handler: 'h', delay: '1h' }, { requestId: 'taken' });
    const before = await keysUnder(store.raw, timers.keys.prefix);
    const refused = [
      timers.schedule({ key: 'a', handler: 'h', delay: '1h' }, { requestId: 'dup' }),
      timers.pause('none', { requestId: 'absent' }),
      timers.cancel('none', { requestId: 'nothing' }),
      timers.cancel('a', { requestId: 'taken' }),
      timers.reschedule('a', { delay: -1 }, { requestId: 'bad' }),
    ];
    const outcomes = await Promise.all(
      refused.map((call) => call.catch((error: { reason: string }) => error.reason)),
    );
    expect(outcomes).toEqual(['duplicate-key', 'not-found', false, 'idempotency-conflict', 'invalid']);
    expect(await keysUnder(store.raw, timers.keys.prefix)).toEqual(before);
  });

  it('cancel and cancelAll retried: the first answer, and the metric counts each cancel once', async () => {
    const counts: number[] = [];
    const observer = { cancelled: ({ count }: { count: number }) => void counts.push(count) };
    const timers = store.open({ partitions: 2, cancelBatch: 2, observer });
    await timers.scheduleMany(
      Array.from({ length: 9 }, (_, n) => ({ key: `s:${n}`, handler: 'h', delay: '1h' as const })),
    );
    expect(await timers.cancelAll('s:', { requestId: 'scope' })).toBe(9);
    expect(await timers.cancelAll('s:', { requestId: 'scope' })).toBe(9);
    expect(counts).toEqual([9, 0]);
    await timers.schedule({ key: 'one', handler: 'h', delay: '1h' });
    expect(await timers.cancel('one', { requestId: 'one' })).toBe(true);
    expect(await timers.cancel('one', { requestId: 'one' })).toBe(true);
    expect(counts).toEqual([9, 0, 1]); // the retry answers true, and counts nothing more
  });

  it('a write cut off from Redis says its outcome is unknown; the retry with its id returns what happened', async () => {
    const proxy = await ReplyDropper.start({ port: Number(new URL(store.url()).port) });
    const timers = store.open({ connection: proxy.url });
    try {
      await timers.connect();
      // the reply is lost and the client's one reconnect is refused: the call fails after Redis ran it
      proxy.dropReplyTo({
        matches: (sent) => scriptOfCall(sent) === 'schedule',
        refuseMs: 1500,
      });
      const spec = { key: 'k', handler: 'h', delay: '1h' } as const;
      const refusal = await timers.schedule(spec, { requestId: 'once' }).catch((error: unknown) => error);
      expect(refusal).toMatchObject({ reason: 'unavailable' });
      expect((refusal as Error).message).toMatch(/may or may not have been applied/);
      expect((refusal as { fix: string }).fix).toMatch(/same requestId/);
      await proxy.listening();
      const stored = await store.open({ prefix: timers.keys.prefix }).get('k');
      expect(stored).not.toBeNull(); // it was applied
      const retried = await timers.schedule(spec, { requestId: 'once' });
      expect(retried).toMatchObject({ id: stored!.id, version: 1 });
    } finally {
      await timers.dispose();
      await proxy.stop();
    }
  });

  it("a retry across the upgrade that sorted a fingerprint's keys is the same request, not a conflict", async () => {
    const timers = store.open();
    const at = Date.parse('2026-03-01T00:00:00Z');
    await timers.schedule({ key: 'b', handler: 'h', every: '1h' });
    const range = { to: at + 2 * 3_600_000, from: at }; // fields not in sorted order, as a caller may send
    const first = await timers.backfill('b', range, { requestId: 'up' });
    expect(first.slots).toBeGreaterThan(0);
    // The fingerprint as the release before sorted keys stored it: the same arguments, keys as sent.
    const legacy = createHash('sha256')
      .update(JSON.stringify(['backfill', 'b', range]))
      .digest('base64url')
      .slice(0, 22);
    await store.raw.set(`${timers.keys.prefix}:request:up`, legacy, 'KEEPTTL');
    expect(await timers.backfill('b', range, { requestId: 'up' })).toEqual(first);
    const other = await timers
      .backfill('b', { from: at, to: at }, { requestId: 'up' })
      .catch((e: unknown) => e);
    expect(other).toMatchObject({ reason: 'idempotency-conflict' });
  });
});
