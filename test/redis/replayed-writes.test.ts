import { requestFingerprint } from '@sundial/core';
import { scriptOfCall, type ScriptName } from '@sundial/redis';
import { ReplyDropper } from '@sundial/testing/harness';
import { commandCalls } from './fire-fixture';
import { eventsOn, useStore } from './store-fixture';

const store = useStore();

/**
 * A write answered again from its first answer (docs/design.md "Repeated calls": includes/requests.lua
 * answers `['again', <the first answer>]`, store/replayed.ts reads it) does nothing its first call did:
 * no metric counted, no event published, no ledger entry written twice — whether the twin comes after
 * (a retry), at the same time (two calls with one request id), or is ioredis's own resend of a call whose
 * reply was lost (which no caller heard: that one counts).
 */
describe('a write given again: counted, emitted and recorded once', () => {
  function counted(options: { partitions?: number; cancelBatch?: number } = {}) {
    const kinds: string[] = [];
    const cancels: number[] = [];
    const observer = {
      scheduled: ({ kind }: { kind: string }) => void kinds.push(kind),
      cancelled: ({ count }: { count: number }) => void cancels.push(count),
    };
    const timers = store.open({ partitions: 2, ...options, observer });
    /** another client on the same prefix, counting into the same metrics (a second replica) */
    const replica = () => store.open({ partitions: 2, ...options, observer, prefix: timers.keys.prefix });
    const cancelled = () => cancels.reduce((sum, count) => sum + count, 0);
    return { timers, replica, kinds, cancelled };
  }

  /**
   * `cutOff`: the caller's first try pinned the id (P:request:<id>) and was cut off before its script ran;
   * its retries come at once: each is a repeated request, none finds a first answer before it is sent.
   */
  async function pinned(prefix: string, cutOff: boolean, operation: string, args: unknown[]) {
    if (cutOff)
      await store.raw.set(`${prefix}:request:twin`, requestFingerprint(operation, args), 'PX', 60_000);
  }
  const TWINS = [
    ['at once', false],
    ['at once after a first try cut off', true],
  ] as const;

  it.each(TWINS)(
    'three cancels %s with one request id: all true, one event and entry, counted once',
    async (_, cutOff) => {
      const { timers, replica, cancelled } = counted();
      await timers.schedule({ key: 'k', handler: 'h', delay: '1h' });
      const other = replica();
      await other.connect();
      await pinned(timers.keys.prefix, cutOff, 'cancel', ['k']);
      const events = await eventsOn(store.raw, store.url(), timers.keys.prefix);
      try {
        // two of one client (a caller's retry sent before the first was answered) and a replica's
        const twins = [timers, timers, other].map((client) => client.cancel('k', { requestId: 'twin' }));
        expect(await Promise.all(twins)).toEqual([true, true, true]);
        expect(cancelled()).toBe(1);
        expect((await events.all()).filter((event) => event.type === 'cancelled')).toHaveLength(1);
        const entries = (await timers.history('k')).filter((entry) => entry.event === 'cancelled');
        expect(entries).toHaveLength(1);
      } finally {
        await events.close();
      }
    },
  );

  it('two scheduleMany at once with one request id over two partitions (two replicas): the same timers, each counted once', async () => {
    const { timers, replica, kinds } = counted();
    const other = replica();
    await other.connect();
    const events = await eventsOn(store.raw, store.url(), timers.keys.prefix);
    try {
      // which replica's guard calls (the one that pinned the id) run after the other's writes varies: rounds
      for (let round = 1; round <= 10; round++) {
        const specs = Array.from({ length: 6 }, (_, n) => ({
          key: `m:${round}:${n}`,
          handler: 'h',
          every: '1h' as const,
        }));
        const requestId = `twin-${round}`;
        const [first, second] = await Promise.all(
          [other, timers].map((client) => client.scheduleMany(specs, { requestId })),
        );
        expect(second).toEqual(first);
        expect(kinds).toHaveLength(6 * round);
        expect((await events.all()).filter((event) => event.type === 'scheduled')).toHaveLength(6 * round);
        expect(await timers.snapshot()).toHaveLength(6 * round);
      }
    } finally {
      await events.close();
    }
  });

  it.each(TWINS)('three schedules %s with one request id: one timer, counted once', async (_, cutOff) => {
    const { timers, replica, kinds } = counted();
    const other = replica();
    await other.connect();
    const spec = { key: 'one', handler: 'h', delay: '1h' } as const;
    await pinned(timers.keys.prefix, cutOff, 'schedule', [spec]);
    const twins = [timers, timers, other].map((client) => client.schedule(spec, { requestId: 'twin' }));
    const [first, ...others] = await Promise.all(twins);
    expect(others).toEqual([first, first]);
    expect(kinds).toEqual(['once']);
  });

  it('two global cancelAll at once with one request id (two replicas): the same count, counted once, one reset', async () => {
    const { timers, replica, cancelled } = counted({ partitions: 3, cancelBatch: 2 });
    const specs = Array.from({ length: 40 }, (_, n) => ({
      key: `a:${n}`,
      handler: 'h',
      delay: '1h' as const,
    }));
    const other = replica();
    await other.connect();
    const events = await eventsOn(store.raw, store.url(), timers.keys.prefix);
    try {
      // which client runs which call varies: a few rounds
      for (let round = 1; round <= 4; round++) {
        await timers.scheduleMany(specs);
        const requestId = `twin-${round}`;
        const twins = [timers, other].map((client) => client.cancelAll('', { requestId }));
        expect(await Promise.all(twins)).toEqual([40, 40]);
        expect(cancelled()).toBe(40 * round);
        const resets = (await events.all()).filter((event) => event.type === 'reset');
        expect(resets.map((event) => event.count)).toEqual(Array<number>(round).fill(40));
      }
    } finally {
      await events.close();
    }
  });

  it('a retry of every write answers as the first and adds no event and no ledger entry', async () => {
    const { timers, kinds, cancelled } = counted();
    await timers.schedule({ key: 'r', handler: 'h', every: '1h' }, { requestId: 's' });
    await timers.schedule({ key: 'gone', handler: 'h', delay: '1h' });
    const range = { from: Date.now() - 3 * 3_600_000, to: Date.now() };
    const events = await eventsOn(store.raw, store.url(), timers.keys.prefix);
    try {
      const writes = [
        () => timers.reschedule('r', { delay: '2h' }, { requestId: 'm' }),
        () => timers.pause('r', { requestId: 'p' }),
        () => timers.resume('r', { requestId: 'u' }),
        // (a backfill after a trigger whose run no worker claimed is refused: it counts as running)
        () => timers.backfill('r', range, { requestId: 'b' }),
        () => timers.trigger('r', { requestId: 't' }),
        () => timers.schedule({ key: 'r', handler: 'h', every: '1h' }, { requestId: 's' }),
        () => timers.cancel('gone', { requestId: 'c' }),
      ];
      const firsts: unknown[] = [];
      for (const write of writes) firsts.push(await write());
      const published = (await events.all()).length;
      const recorded = (await timers.history('r')).length;
      for (const [n, write] of writes.entries()) expect(await write()).toEqual(firsts[n]);
      expect((await events.all()).length).toBe(published);
      expect(await timers.history('r')).toHaveLength(recorded);
      expect([kinds, cancelled()]).toEqual([['interval', 'once'], 1]);
    } finally {
      await events.close();
    }
  });
});

describe('a retry with the request id of a write that was answered', () => {
  it('sends no command to look for its first answer: the script tells it (no EXISTS)', async () => {
    const timers = store.open({ partitions: 2 });
    const specs = ['a', 'b', 'c'].map((key) => ({ key, handler: 'h', delay: '1h' as const }));
    await timers.scheduleMany(specs, { requestId: 'many' });
    await timers.cancel('a', { requestId: 'one' });
    await store.raw.config('RESETSTAT');
    await timers.scheduleMany(specs, { requestId: 'many' });
    expect(await timers.cancel('a', { requestId: 'one' })).toBe(true);
    expect(await commandCalls(store.raw, 'exists')).toBe(0);
  });
});

describe('a lost reply resent by ioredis (a fresh id: nobody heard the first answer)', () => {
  async function throughProxy(script: ScriptName) {
    const proxy = await ReplyDropper.start({ port: Number(new URL(store.url()).port) });
    const cancels: number[] = [];
    const timers = store.open({
      connection: proxy.url,
      observer: { cancelled: ({ count }) => void cancels.push(count) },
    });
    await timers.connect();
    const drop = () => proxy.dropReplyTo({ matches: (sent) => scriptOfCall(sent) === script });
    return { proxy, timers, drop, cancelled: () => cancels.reduce((sum, count) => sum + count, 0) };
  }

  it('cancelAll: its cancels counted, and a global one publishes its reset', async () => {
    const { proxy, timers, drop, cancelled } = await throughProxy('cancel-all');
    const events = await eventsOn(store.raw, store.url(), timers.keys.prefix);
    try {
      await timers.scheduleMany(
        Array.from({ length: 3 }, (_, n) => ({ key: `a:${n}`, handler: 'h', delay: '1h' })),
      );
      drop();
      expect(await timers.cancelAll('a:')).toBe(3);
      expect(proxy.dropped).toBe(1);
      expect(cancelled()).toBe(3);
      await timers.schedule({ key: 'b', handler: 'h', delay: '1h' });
      drop();
      expect(await timers.cancelAll()).toBe(1);
      expect(proxy.dropped).toBe(2);
      expect(cancelled()).toBe(4);
      const resets = (await events.all()).filter((event) => event.type === 'reset');
      expect(resets.map((event) => event.count)).toEqual([1]);
    } finally {
      await events.close();
      await timers.dispose();
      await proxy.stop();
    }
  });

  it('cancel: counted once', async () => {
    const { proxy, timers, drop, cancelled } = await throughProxy('cancel');
    try {
      await timers.schedule({ key: 'c', handler: 'h', delay: '1h' });
      drop();
      expect(await timers.cancel('c')).toBe(true);
      expect(proxy.dropped).toBe(1);
      expect(cancelled()).toBe(1);
    } finally {
      await timers.dispose();
      await proxy.stop();
    }
  });
});
