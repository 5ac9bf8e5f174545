import type { Type } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { Test, type TestingModule } from '@nestjs/testing';
import { SundialModule } from '@sundial/client';
import { type RedisServer, startRedis } from '@sundial/testing/harness';

export interface RegistrarBoot {
  /** its config's values (`DIGEST_CRON`, `BEAT_EVERY`, …) */
  config?: Record<string, unknown>;
  appName?: string;
  /** `SundialModule`'s option (default 5000): how often a replica looks whether its declaration set is the newest */
  cronRefreshMs?: number;
  /** the app is pushed here before its init, so a test closes it even when the init refused */
  into?: TestingModule[];
}

/**
 * The suites of the `@DistributedCron` / `@DistributedInterval` registrar on Redis: one private Redis for
 * the suite, a prefix of its own for each test, and `boot(providers)` = an app of those providers with
 * `SundialModule` on it and a ConfigModule, initialised.
 */
export function registrarOnRedis(tag: string) {
  let redis: RedisServer;
  let n = 0;
  let prefix: string;
  beforeAll(async () => {
    redis = await startRedis();
  });
  beforeEach(() => {
    prefix = `${tag}${n++}`;
  });
  afterAll(async () => {
    await redis.stop();
  });

  async function boot(
    providers: Type[],
    { config = {}, appName, cronRefreshMs, into = [] }: RegistrarBoot = {},
  ) {
    const app = await Test.createTestingModule({
      imports: [
        ConfigModule.forRoot({ ignoreEnvFile: true, load: [() => config] }),
        SundialModule.forRoot({ connection: redis.url, prefix, appName, cronRefreshMs }),
      ],
      providers,
    }).compile();
    into.push(app);
    await app.init();
    return app;
  }

  return { boot, url: () => redis.url, prefix: () => prefix };
}
