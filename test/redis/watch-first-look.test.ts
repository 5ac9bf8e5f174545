import { type DataLoss, watchPartitionCount } from '@sundial/redis';
import { waitFor } from '@sundial/testing/harness';
import { useStore } from './store-fixture';

/**
 * docs/spec.md §4.1: a watch's first look is done before it resolves, and the apps report ready only
 * after it: a scheduler ready just before its Redis Cluster came back empty never said the loss (its
 * watch, started after it listened, first looked after the loss and took the new markers for a first
 * start; test/cluster/cluster-outage.test.ts failed so on CI).
 */
describe('a watch of the data markers', () => {
  const store = useStore();

  it('a watch resolves once it has looked: a loss the moment after is told (the apps are ready after it)', async () => {
    const prefix = 'dm-first-look';
    await store.raw.set(`${prefix}:epoch`, `${Date.now()}-000000000000`);
    const losses: DataLoss[] = [];
    const stop = await watchPartitionCount({
      connection: store.url(),
      prefix,
      intervalMs: 50,
      told: new Set<string>(),
      onDataLost: (loss) => losses.push(loss),
    });
    try {
      // Before its first look this delete would only be a first start to the watch: nothing told.
      await store.raw.del(`${prefix}:epoch`);
      await waitFor(() => losses.length > 0 || undefined, {
        timeoutMs: 5_000, // deadline: a look each 50 ms
        what: 'the watch to tell the loss',
      });
    } finally {
      await stop();
    }
  });
});
