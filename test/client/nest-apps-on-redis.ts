import type { TestingModule } from '@nestjs/testing';
import { type RedisServer, startRedis } from '@sundial/testing/harness';
import { Redis } from 'ioredis';

export interface NestAppsOnRedis {
  /** the suite's private Redis */
  readonly redis: RedisServer;
  /** a connection of the suite's own, to look at what the apps wrote */
  readonly probe: Redis;
  /** apps pushed here (before their init, which may refuse) are closed after each test */
  readonly apps: TestingModule[];
  closeApps(): Promise<void>;
}

/** For the suite that calls it: one private Redis and a probe on it, and the test's apps closed after each test. */
export function nestAppsOnRedis(): NestAppsOnRedis {
  let redis: RedisServer | undefined;
  let probe: Redis | undefined;
  const apps: TestingModule[] = [];
  const closeApps = async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  };
  beforeAll(async () => {
    redis = await startRedis();
    probe = new Redis(redis.url);
  });
  afterEach(closeApps);
  afterAll(async () => {
    await probe?.quit();
    await redis?.stop();
  });
  return {
    get redis() {
      return redis!;
    },
    get probe() {
      return probe!;
    },
    apps,
    closeApps,
  };
}
