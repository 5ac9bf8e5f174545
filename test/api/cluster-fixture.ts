import type { JsonValue, Timer, TimerContext } from '@sundial/core';
import { type HttpClient, keyPath, type RedisServer, startRedis } from '@sundial/testing/harness';
import { type RunningApp, startScheduler, startWorker } from '../local-cluster';

/** The largest payload the fixture's scheduler takes (SUNDIAL_MAX_PAYLOAD_BYTES). */
export const MAX_PAYLOAD = 1024;

export interface ClusterFixture {
  /** the scheduler's API (valid from beforeAll on) */
  readonly api: HttpClient;
  /** the scheduler's base URL and its private Redis (valid from beforeAll on) */
  readonly url: string;
  readonly redisUrl: string;
  /** every run the worker's handlers saw, in order */
  readonly runs: TimerContext[];
  /** the `block` runs in progress, by key: calling one lets its run end */
  readonly releases: Map<string, () => void>;
  getTimer(key: string): Promise<Timer>;
  /** the timer's status, or 'gone' when GET answers 404 */
  statusOf(key: string): Promise<string>;
}

/**
 * A private Redis, a scheduler and a worker (in this process) for the suite that calls this
 * (beforeAll/afterAll): docs/spec.md §3 over the HTTP API of §5.2. The worker's handlers: `record`
 * notes its run, `fail` throws, `block` holds its timer `running` until released (or aborted).
 */
export function useCluster(): ClusterFixture {
  let redis: RedisServer | undefined;
  let scheduler: RunningApp | undefined;
  let worker: RunningApp | undefined;
  const runs: TimerContext[] = [];
  const releases = new Map<string, () => void>();

  const handlers = {
    record: (_payload: JsonValue, ctx: TimerContext) => {
      runs.push(ctx);
    },
    fail: () => {
      throw new Error('boom');
    },
    block: (_payload: JsonValue, ctx: TimerContext) =>
      new Promise<void>((resolve) => {
        releases.set(ctx.key, resolve);
        ctx.signal.addEventListener('abort', () => resolve());
      }),
  };

  beforeAll(async () => {
    redis = await startRedis();
    [scheduler, worker] = await Promise.all([
      startScheduler(redis.url, { maxPayloadBytes: MAX_PAYLOAD }),
      startWorker(redis.url, handlers),
    ]);
  });

  afterAll(async () => {
    for (const release of releases.values()) release();
    await Promise.all([scheduler?.close(), worker?.close()]);
    await redis?.stop();
  });

  const api = ((...args: Parameters<HttpClient>) => scheduler!.api(...args)) as HttpClient;
  return {
    api,
    get url() {
      return scheduler!.url;
    },
    get redisUrl() {
      return redis!.url;
    },
    runs,
    releases,
    getTimer: async (key) => (await api<Timer>('GET', keyPath(key))).body,
    async statusOf(key) {
      const reply = await api<Timer>('GET', keyPath(key));
      return reply.status === 404 ? 'gone' : reply.body.status;
    },
  };
}
