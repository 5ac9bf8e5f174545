import { isSundialError } from '@sundial/core';
import { useStore } from './store-fixture';

/** The partition count is part of the data (issue 12): a client with another count refuses to work. */
describe('partition count', () => {
  const store = useStore();

  it('is recorded by the first client on a prefix; a client with another count is refused', async () => {
    const first = store.open({ prefix: 'pc', partitions: 2 });
    await first.schedule({ key: 'a', handler: 'h', delay: '1h' });
    expect(await store.raw.get('pc:partitions')).toBe('2');

    const other = store.open({ prefix: 'pc', partitions: 3 });
    const refusal = await other
      .schedule({ key: 'b', handler: 'h', delay: '1h' })
      .catch((error: unknown) => error);
    expect(isSundialError(refusal)).toBe(true);
    expect(refusal).toMatchObject({
      reason: 'invalid',
      field: 'partitions',
      message: expect.stringContaining('spread over 2 partitions, and this process was started with 3'),
      fix: expect.stringContaining('SUNDIAL_PARTITIONS=2'),
    });
    expect(await other.get('a').catch((error: { reason: string }) => error.reason)).toBe('invalid');
    expect(await store.raw.exists('pc:{p0}:t:b', 'pc:{p1}:t:b', 'pc:{p2}:t:b')).toBe(0);

    const same = store.open({ prefix: 'pc', partitions: 2 });
    expect((await same.get('a'))?.key).toBe('a');
  });

  it('after Redis lost its data (a restart without persistence), a miss is a miss, said once, and the count is recorded again', async () => {
    const timers = store.open({ prefix: 'lost', partitions: 2 });
    await timers.schedule({ key: 'a', handler: 'h', delay: '1h' });
    // What a restart without AOF or RDB leaves: no key under the prefix, `P:partitions` included.
    await store.raw.del(...(await store.raw.keys('lost:*')));

    expect(await timers.get('a')).toBeNull();
    expect(await timers.check('1p0')).toBe(false);
    expect(await store.raw.get('lost:partitions')).toBe('2');
    // ... and not silently (docs/spec.md §4.1): one error line, with the fix.
    expect(store.logs.filter((line) => line.message.includes("Redis lost Sundial's data"))).toEqual([
      {
        level: 'error',
        message: expect.stringContaining(
          "Sundial: Redis lost Sundial's data under prefix 'lost' (first written",
        ),
        fields: { fix: expect.stringContaining('appendonly yes'), prefix: 'lost', since: expect.any(String) },
      },
    ]);
    // The record guards the data again: a client with another count is refused.
    const other = store.open({ prefix: 'lost', partitions: 3 });
    await expect(other.get('a')).rejects.toMatchObject({ reason: 'invalid', field: 'partitions' });
    expect((await timers.schedule({ key: 'a', handler: 'h', delay: '1h' })).key).toBe('a');
  });
});
