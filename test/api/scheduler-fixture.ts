import { type ErrorBody, type HttpClient, type RedisServer, startRedis } from '@sundial/testing/harness';
import Redis from 'ioredis';
import { type RunningApp, startScheduler } from '../local-cluster';

export interface SchedulerFixture {
  /** the scheduler's API (valid from beforeAll on) */
  readonly api: HttpClient;
  /** a connection to its private Redis */
  readonly raw: Redis;
  readonly url: string;
  /**
   * A call that must be refused with `status` and change nothing in Redis (docs/spec.md §2): sends it,
   * checks both, and returns the error body for the caller to check.
   */
  refused(method: string, path: string, body?: unknown, status?: number): Promise<ErrorBody['error']>;
}

/** A private Redis and the scheduler app over it, for the suite that calls this (beforeAll/afterAll). */
export function useScheduler(): SchedulerFixture {
  let redis: RedisServer | undefined;
  let raw: Redis | undefined;
  let scheduler: RunningApp | undefined;

  beforeAll(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
    scheduler = await startScheduler(redis.url);
  });

  afterAll(async () => {
    await scheduler?.close();
    raw?.disconnect();
    await redis?.stop();
  });

  const api = ((...args: Parameters<HttpClient>) => scheduler!.api(...args)) as HttpClient;
  return {
    api,
    get raw() {
      return raw!;
    },
    get url() {
      return scheduler!.url;
    },
    async refused(method, path, body, status = 400) {
      const before = (await raw!.keys('*')).sort();
      const reply = await api<ErrorBody>(method, path, body);
      expect(reply.status).toBe(status);
      expect((await raw!.keys('*')).sort()).toEqual(before);
      return reply.body.error;
    },
  };
}
