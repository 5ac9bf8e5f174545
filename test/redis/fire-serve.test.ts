import { waitFor } from '@sundial/testing/harness';
import { matching, useFirePath } from './fire-fixture';

const fire = useFirePath();

describe('fire path: processes serving a subset of the partitions', () => {
  it('a pair serving {0,1} fires only their timers; a pair serving {2,3} fires the rest, each once', async () => {
    const cluster = await fire.cluster({ partitions: 4 });
    const ranBy = new Map<string, string[]>();
    const handlerOf = (name: string) => ({
      h: (_payload: unknown, ctx: { key: string }) =>
        void ranBy.set(ctx.key, [...(ranBy.get(ctx.key) ?? []), name]),
    });
    const keys = Array.from({ length: 80 }, (_, i) => `serve:${i}`);
    const low = keys.filter((key) => cluster.partitionOf(key) < 2);
    expect(new Set(keys.map((key) => cluster.partitionOf(key)))).toEqual(new Set([0, 1, 2, 3]));

    await cluster.dispatcher({ serve: [0, 1] });
    await cluster.runner(handlerOf('low'), { serve: [1, 0] });
    await cluster.timers.scheduleMany(keys.map((key) => ({ key, handler: 'h', delay: 0 })));
    await waitFor(() => matching(cluster.events, { type: 'completed' }).length === low.length, {
      what: 'the runs of partitions 0 and 1',
    });
    // Every timer was due at once: those of 2 and 3 were left to nobody, not merely later.
    expect(keys.filter((key) => ranBy.has(key))).toEqual(low);
    const waiting = await Promise.all(
      keys.filter((key) => !low.includes(key)).map((key) => cluster.timers.get(key)),
    );
    expect(waiting.map((timer) => timer?.status)).toEqual(waiting.map(() => 'pending'));

    await cluster.dispatcher({ serve: [2, 3] });
    await cluster.runner(handlerOf('high'), { serve: [2, 3] });
    await waitFor(() => matching(cluster.events, { type: 'completed' }).length === keys.length, {
      what: 'every run',
    });
    for (const key of keys) {
      expect({ key, ran: ranBy.get(key) }).toEqual({
        key,
        ran: [cluster.partitionOf(key) < 2 ? 'low' : 'high'],
      });
    }
  });
});
