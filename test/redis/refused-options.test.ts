import { ENV_LIMIT_SETTINGS } from '@sundial/core';
import { Dispatcher, Reconciler } from '@sundial/redis';
import Redis from 'ioredis';

/** ioredis options for a redis:// URL. */
function redisOptions(url: string): { host: string; port: number } {
  const { hostname, port } = new URL(url);
  return { host: hostname, port: Number(port) };
}
import { useStore } from './store-fixture';

/**
 * A Redis-backed class refused for a bad option (docs/spec.md §2: a refusal changes nothing) opens no
 * connection: the options are checked before its connection is made, so a process that catches the
 * refusal (or a test that tries several) is left with no socket to Redis it cannot close.
 */
describe('a refused option leaves no connection open', () => {
  const store = useStore();

  /** The connections Redis has, seen after a connection made later than every refused one has answered. */
  const connectionsAfter = async (refused: () => void): Promise<number> => {
    refused();
    // Redis accepts connections in the order they came: once this later one has answered a command,
    // any that a refused constructor opened is listed too.
    const later = new Redis(store.url());
    try {
      await later.ping();
      const listed = (await store.raw.client('LIST')) as string;
      return listed.trim().split('\n').length - 1; // the later one's own line
    } finally {
      await later.quit();
    }
  };

  it.each([
    ['ledger -1', { ledger: -1 }, 'ledger'],
    ['ledger 2.5', { ledger: 2.5 }, 'ledger'],
    ['ledger 5000', { ledger: 5_000 }, 'ledger'],
  ])('%s: RedisTimers, Dispatcher and Reconciler are refused with no connection', async (_, bad, field) => {
    const before = await connectionsAfter(() => undefined);
    const classes = [
      () => store.open(bad),
      () => new Dispatcher({ connection: store.url(), prefix: 'refused', ...bad }),
      () => new Reconciler({ connection: store.url(), prefix: 'refused', ...bad }),
    ];
    for (const open of classes) {
      expect(
        await connectionsAfter(() =>
          expect(open).toThrow(expect.objectContaining({ reason: 'invalid', field })),
        ),
      ).toBe(before);
    }
  });

  // Redis takes whole ms only: unchecked, a requestWindowMs of 0 or 1.5 failed each write with a requestId
  // with Redis's own "ERR invalid expire time", and a tombstoneMs of 1.5 each cancel, half done.
  it.each([
    ['requestWindowMs 0', { requestWindowMs: 0 }, 'requestWindowMs'],
    ['requestWindowMs 1.5', { requestWindowMs: 1.5 }, 'requestWindowMs'],
    ['requestWindowMs -1', { requestWindowMs: -1 }, 'requestWindowMs'],
    ['tombstoneMs 1.5', { tombstoneMs: 1.5 }, 'tombstoneMs'],
    ['tombstoneMs -1', { tombstoneMs: -1 }, 'tombstoneMs'],
    ['cancelBatch 0', { cancelBatch: 0 }, 'cancelBatch'],
    ['limits.minEveryMs 0', { limits: { minEveryMs: 0 } }, 'limits.minEveryMs'],
    ['limits.maxPayloadBytes -1', { limits: { maxPayloadBytes: -1 } }, 'limits.maxPayloadBytes'],
  ])('%s: RedisTimers is refused with no connection', async (_, bad, field) => {
    const before = await connectionsAfter(() => undefined);
    const refused = expect.objectContaining({ name: 'SundialError', reason: 'invalid', field });
    expect(await connectionsAfter(() => expect(() => store.open(bad)).toThrow(refused))).toBe(before);
  });

  // A client made for the app's own keys: its timers went to `app:sundial:…`, which no scheduler or worker
  // reads (SundialModule refused it; RedisTimers used directly took it).
  it.each([
    ['options', (url: string) => ({ ...redisOptions(url), keyPrefix: 'app:' })],
    ['a client', (url: string) => new Redis(url, { keyPrefix: 'app:', lazyConnect: true })],
  ])(
    'a connection with ioredis keyPrefix (%s): RedisTimers is refused naming the prefix to use',
    (_, make) => {
      const connection = make(store.url());
      expect(() => store.open({ connection, prefix: 'sundial' })).toThrow(
        expect.objectContaining({
          reason: 'invalid',
          field: 'connection.keyPrefix',
          fix: expect.stringContaining('prefix: "app:sundial"'),
        }),
      );
      if (connection instanceof Redis) connection.disconnect();
    },
  );

  it("takes the scheduler's limits, which say where they are set (setBy)", () => {
    const limits = { maxPayloadBytes: 1, minEveryMs: 1, setBy: ENV_LIMIT_SETTINGS };
    expect(() => store.open({ limits })).not.toThrow();
  });

  it('a bad SUNDIAL_LEDGER and a bad partition count are refused with no connection', async () => {
    const before = await connectionsAfter(() => undefined);
    process.env.SUNDIAL_LEDGER = 'lots';
    try {
      const refused = () => store.open();
      expect(
        await connectionsAfter(() =>
          expect(refused).toThrow(expect.objectContaining({ field: 'SUNDIAL_LEDGER' })),
        ),
      ).toBe(before);
    } finally {
      delete process.env.SUNDIAL_LEDGER;
    }
    const zero = () => store.open({ partitions: 0 });
    const refusedZero = expect.objectContaining({ reason: 'invalid', field: 'partitions' });
    expect(await connectionsAfter(() => expect(zero).toThrow(refusedZero))).toBe(before);
  });
});
