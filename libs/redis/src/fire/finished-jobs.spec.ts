import type { Job } from 'bullmq';
import { Cluster } from 'ioredis';
import { EventEmitter } from 'node:events';
import type { RedisClient } from '../infra/connection';
import { FinishedJobs } from './finished-jobs';

/**
 * A Redis Cluster client that connects nowhere: the test says which primaries each slots' refresh found
 * (`refreshed`) and what the lock key holds; the watch's own refreshes (every second) find nothing, as
 * refreshes that fail or come late on a loaded host.
 */
function fakeCluster(lock: string) {
  const cluster = new Cluster([], { lazyConnect: true });
  let primaries = ['127.0.0.1:7000', '127.0.0.1:7001'];
  Object.assign(cluster, {
    status: 'ready',
    nodes: () => primaries.map((key) => ({ options: { host: key.split(':')[0], port: key.split(':')[1] } })),
    refreshSlotsCache: () => undefined,
    get: () => Promise.resolve(lock),
  });
  return {
    cluster,
    refreshed(found: string[]): void {
      primaries = found;
      cluster.emit('refresh');
    },
  };
}

function job(token: string, moved: string[]): Job {
  return {
    id: '1',
    token,
    queueQualifiedName: '{fj}:fire',
    moveToCompleted: (_value: unknown, by: string) => {
      moved.push(by);
      return Promise.resolve();
    },
  } as unknown as Job;
}

/**
 * docs/design.md "A finish the server lost", on a Redis Cluster (virtual clock): the finishes checked when
 * a slots' refresh finds a new primary are those of the 10 s before the last refresh that found the old
 * ones, not before the refresh that found the change — which comes late when refreshes fail or lag.
 */
describe('FinishedJobs on a Redis Cluster', () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] }));
  afterEach(() => jest.useRealTimers());

  async function promotedAfter(finishToLastSeenMs: number, lastSeenToFoundMs: number): Promise<string[]> {
    const { cluster, refreshed } = fakeCluster('token-1');
    const moved: string[] = [];
    const again: number[] = [];
    const finishes = new FinishedJobs({
      redis: cluster,
      onFinishedAgain: (jobs) => again.push(jobs),
      logError: (message) => {
        throw new Error(message);
      },
    });
    try {
      refreshed(['127.0.0.1:7000', '127.0.0.1:7001']);
      finishes.finished(job('token-1', moved));
      jest.advanceTimersByTime(finishToLastSeenMs);
      refreshed(['127.0.0.1:7000', '127.0.0.1:7001']); // the last refresh that found the old primary
      jest.advanceTimersByTime(lastSeenToFoundMs); // virtual clock: refreshes failing meanwhile
      refreshed(['127.0.0.1:7000', '127.0.0.1:7002']); // 7001's replica promoted
      await jest.advanceTimersByTimeAsync(0);
      expect(again).toEqual(moved.length > 0 ? [1] : []);
      return moved;
    } finally {
      finishes.stop();
    }
  }

  it('finishes again a job finished just before a promotion that refreshes found 12 s late', async () => {
    // Before, the 10 s were counted back from the refresh that found it: the finish was dropped.
    expect(await promotedAfter(500, 12_000)).toEqual(['token-1']);
  });

  it('still finishes again one a refresh found at once', async () => {
    expect(await promotedAfter(500, 1_000)).toEqual(['token-1']);
  });

  it('leaves a finish more than 10 s before the last refresh that found the old primary', async () => {
    expect(await promotedAfter(10_500, 1_000)).toEqual([]);
  });
});

/**
 * A connection that comes back and drops again before each check of the finishes is answered: each close
 * added its finishes to those owed from the closes before, without bound (10,000 jobs and their data each).
 */
describe('FinishedJobs on a connection that keeps dropping', () => {
  it('owes at most 10,000 finishes, however many checks a close cut off', async () => {
    const gets: string[] = [];
    let answer: () => Promise<string | null> = () => Promise.resolve(null);
    const redis = Object.assign(new EventEmitter(), {
      status: 'ready',
      get: (key: string) => {
        gets.push(key);
        return answer();
      },
    });
    const finishes = new FinishedJobs({
      redis: redis as unknown as RedisClient,
      onFinishedAgain: () => undefined,
      logError: (message) => {
        throw new Error(message);
      },
    });
    try {
      for (let cut = 0; cut < 3; cut++) {
        for (let n = 0; n < 10_000; n++) finishes.finished(job(`token-${cut}-${n}`, []));
        redis.emit('close');
        let drop: () => void = () => undefined;
        const dropped = new Promise<never>(
          (_, reject) => (drop = () => reject(new Error('Connection is closed.'))),
        );
        answer = () => dropped;
        redis.emit('ready'); // its check's reads go out
        redis.emit('close'); // and the connection drops before they are answered
        drop();
        await new Promise(setImmediate);
      }
      gets.length = 0;
      answer = () => Promise.resolve(null);
      redis.emit('ready');
      await new Promise(setImmediate);
      expect(gets.length).toBeGreaterThan(0);
      expect(gets.length).toBeLessThanOrEqual(10_000);
    } finally {
      finishes.stop();
    }
  });
});
