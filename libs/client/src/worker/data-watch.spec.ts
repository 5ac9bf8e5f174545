import { Injectable } from '@nestjs/common';
import { Test, type TestingModule } from '@nestjs/testing';
import { silentLogger } from '@sundial/core';
import { type RedisServer, startRedis, waitFor } from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { DistributedCron, SundialModule, SundialWorkerModule, Timers } from '../index';

const LOST = "Redis lost Sundial's data";

@Injectable()
class DailyDigest {
  @DistributedCron('digest', '0 8 * * *')
  send(): void {}
}

/** Until a watch connection other than `not` has read the marker (its first command is that GET); resolves its id. */
async function watchLooked(raw: Redis, not?: string): Promise<string> {
  return waitFor(
    async () => {
      const list = (await raw.client('LIST')) as string;
      const looked = [...list.matchAll(/id=(\d+) .*name=sundial-watch .*cmd=get/g)].map((match) => match[1]);
      return looked.find((id) => id !== not);
    },
    { what: 'the watch to read the marker' },
  );
}

/**
 * docs/spec.md §4.1 in an app that embeds the worker (no apps/scheduler, no apps/worker): SundialWorkerModule
 * runs the apps' data watch, so a Redis that lost its data is said once, counted in the module's registry,
 * and the app's @DistributedCron rows are registered again.
 */
describe('SundialWorkerModule: Redis losing its data', () => {
  let redis: RedisServer;
  let raw: Redis;
  let app: TestingModule | undefined;
  beforeAll(async () => {
    redis = await startRedis();
    raw = new Redis(redis.url);
  });
  afterAll(async () => {
    await app?.close();
    raw?.disconnect();
    await redis?.stop();
  });

  it('one error line, sundial_redis_data_lost_total 1, the cron row back; nothing on a reconnect', async () => {
    const errors: string[] = [];
    const registry = new Registry();
    app = await Test.createTestingModule({
      imports: [
        SundialModule.forRoot({
          connection: redis.url,
          prefix: 'dw',
          logger: { ...silentLogger, error: (message) => errors.push(message) },
        }),
        SundialWorkerModule.forRoot({ prefix: 'dw', dispatch: true, metricsRegistry: registry }),
      ],
      providers: [DailyDigest],
    }).compile();
    await app.init();
    const timers = app.get(Timers);
    const lost = async () =>
      (await registry.getSingleMetric('sundial_redis_data_lost_total')?.get())?.values[0]?.value;
    expect(await timers.get('cron:digest')).toMatchObject({ cron: '0 8 * * *' });
    expect(await lost()).toBe(0);

    // A reconnect finds the marker it saw: no loss.
    const first = await watchLooked(raw);
    await raw.client('KILL', 'ID', first);
    await watchLooked(raw, first);

    await raw.flushall(); // what a restart without persistence leaves
    await waitFor(async () => ((await lost()) === 1 ? true : undefined), {
      timeoutMs: 15_000,
      what: 'sundial_redis_data_lost_total to be 1',
    });
    const row = await waitFor(async () => (await timers.get('cron:digest')) ?? undefined, {
      what: 'the @DistributedCron row registered again',
    });
    expect(row).toMatchObject({ cron: '0 8 * * *', status: 'pending' });
    expect(errors.filter((message) => message.includes(LOST))).toEqual([
      expect.stringContaining('Every timer created before is gone'),
    ]);
  });
});
