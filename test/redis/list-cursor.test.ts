import type { ListOptions, Timer } from '@sundial/core';
import type { RedisTimers } from '@sundial/redis';
import Redis from 'ioredis';
import { TimerReads } from '../../libs/redis/src/client/timer-reads';
import { useStore } from './store-fixture';

/** These reads meet no cancelAll scope record (none is written here): nothing to sweep. */
const noSweep = (): Promise<void> => Promise.resolve();

const store = useStore();
const connections: Redis[] = [];
afterEach(() => Promise.all(connections.splice(0).map((redis) => redis.quit())));

/**
 * A list page reads the key index, then the rows: a timer that fires or is cancelled between the two
 * leaves the page short. The walk must go on after the last key it took, not skip the keys it read
 * but did not take (a 200,000-timer walk with timers firing meanwhile lost whole stretches).
 */
describe('list cursor while timers go between the index read and the row read', () => {
  it('returns every timer that stayed live exactly once', async () => {
    const timers = store.open();
    const keys = Array.from({ length: 10 }, (_, i) => `k${String(i + 1).padStart(2, '0')}`);
    await timers.scheduleMany(keys.map((key) => ({ key, handler: 'h', delay: '1h' })));
    // Cancelled right after the index read that returned them, before their rows are read.
    const goneBeforeRowRead = [['k02'], ['k04']];
    const reads = readsCancellingBeforeRowReads(timers, goneBeforeRowRead);

    const seen = await walk((options) => reads.list(options), { limit: 3 });

    const gone = goneBeforeRowRead.flat();
    expect(seen).toEqual(keys.filter((key) => !gone.includes(key)));
  });

  it('with a status filter too', async () => {
    const timers = store.open();
    const keys = Array.from({ length: 10 }, (_, i) => `s${String(i + 1).padStart(2, '0')}`);
    await timers.scheduleMany(keys.map((key) => ({ key, handler: 'h', delay: '1h' })));
    // The first pipeline is the status check (HMGET) of the chunk read; the second, the rows of its first 3.
    const reads = readsCancellingBeforeRowReads(timers, [[], ['s02', 's03']]);

    const seen = await walk((options) => reads.list({ ...options, status: 'pending' }), { limit: 3 });

    expect(seen).toEqual(keys.filter((key) => !['s02', 's03'].includes(key)));
  });
});

async function walk(
  list: (options: ListOptions) => Promise<{ items: Timer[]; nextCursor: string | null }>,
  options: ListOptions,
): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await list({ ...options, cursor });
    seen.push(...page.items.map((timer) => timer.key));
    cursor = page.nextCursor ?? undefined;
  } while (cursor);
  return seen;
}

/**
 * The client's reads on a connection whose n-th pipeline (a page's row reads, or a status check) is
 * preceded by cancelling the n-th group of keys through `timers`: as if they fired meanwhile.
 */
function readsCancellingBeforeRowReads(timers: RedisTimers, groups: string[][]): TimerReads {
  const redis = new Redis(store.url());
  connections.push(redis);
  let rowReads = 0;
  const wrapped = new Proxy(redis, {
    get(target, name, receiver) {
      if (name !== 'pipeline') return Reflect.get(target, name, receiver) as unknown;
      return () => {
        const pipeline = target.pipeline();
        const exec = pipeline.exec.bind(pipeline);
        pipeline.exec = async () => {
          const group = groups[rowReads++] ?? [];
          for (const key of group) await timers.cancel(key);
          return exec();
        };
        return pipeline;
      };
    },
  });
  return new TimerReads(wrapped, timers.keys, noSweep);
}
