import { Injectable } from '@nestjs/common';
import { BullModule } from '@nestjs/bullmq';
import { Test } from '@nestjs/testing';
import { SundialError } from '@sundial/core';
import { Redis } from 'ioredis';
import { nestAppsOnRedis } from '../../../../test/client/nest-apps-on-redis';
import { DistributedCron, SundialModule, SundialWorkerModule } from '../index';

@Injectable()
class Digest {
  @DistributedCron('digest', '0 9 * * *')
  digest(): void {}
}

/**
 * SundialWorkerModule's `configKey` (docs/spec.md §5.1): the app's own BullModule.forRoot connection,
 * refused at boot with reason `invalid`, field `configKey` and a fix when it cannot serve the fire queues —
 * and a boot so refused writes none of the app's @DistributedCron rows.
 */
describe('SundialWorkerModule configKey: the shared BullModule connection, checked at boot', () => {
  const suite = nestAppsOnRedis();
  let prefix = 0;

  /** A boot refused at compile leaves no connection of SundialModule's open: it opens them at bootstrap. */
  async function boot(bull: ReturnType<typeof BullModule.forRoot>, configKey: string) {
    const p = `s${prefix++}`;
    // The providers are made at compile (NestFactory.create's), the hooks run at init: either may refuse.
    const failure = await Test.createTestingModule({
      imports: [
        bull,
        SundialModule.forRoot({
          connection: suite.redis.url,
          prefix: p,
        }),
        SundialWorkerModule.forRoot({ prefix: p, configKey }),
      ],
      providers: [Digest],
    })
      .compile()
      .then(async (app) => {
        suite.apps.push(app);
        await app.init();
        return null;
      })
      .catch((error: unknown) => error);
    return { p, failure };
  }

  it('a connection to another database: refused, and the boot wrote no cron row and announced no set', async () => {
    const { p, failure } = await boot(
      BullModule.forRoot('elsewhere', { connection: { url: `${suite.redis.url}/3` } }),
      'elsewhere',
    );
    expect(failure).toMatchObject({ reason: 'invalid', field: 'configKey' });
    // Before, the registrar's pass ran as soon as the runner announced its handlers, before the check:
    // a replica that could take no fire job rewrote the rows and stood as the newest declaration set,
    // so the healthy replicas deferred to it (and did again at each of its crash-loop restarts).
    expect(await suite.probe.exists(`${p}:cron-sets:app`)).toBe(0);
    expect(await suite.probe.keys(`${p}:*cron:digest*`)).toEqual([]);
  });

  it('a configKey no BullModule.forRoot registers: Sundial says so, not @nestjs/bullmq', async () => {
    const { failure } = await boot(
      BullModule.forRoot('jobs', { connection: { url: suite.redis.url } }),
      'job',
    );
    expect(failure).toBeInstanceOf(SundialError);
    expect(failure).toMatchObject({ reason: 'invalid', field: 'configKey' });
    expect((failure as SundialError).message).toContain(`configKey: 'job'`);
    expect((failure as SundialError).fix).toContain(`BullModule.forRoot('job', { connection })`);
  });

  it('an ioredis client without maxRetriesPerRequest: null, which BullMQ workers refuse: Sundial says so', async () => {
    const client = new Redis(suite.redis.url);
    try {
      const { failure } = await boot(BullModule.forRoot('jobs', { connection: client }), 'jobs');
      expect(failure).toBeInstanceOf(SundialError);
      expect(failure).toMatchObject({ reason: 'invalid', field: 'configKey' });
      expect((failure as SundialError).message).toContain('maxRetriesPerRequest 20');
      expect((failure as SundialError).fix).toContain('{ maxRetriesPerRequest: null }');
    } finally {
      client.disconnect();
    }
  });

  it('the same client with maxRetriesPerRequest: null boots', async () => {
    const client = new Redis(suite.redis.url, { maxRetriesPerRequest: null });
    try {
      const { failure } = await boot(BullModule.forRoot('jobs', { connection: client }), 'jobs');
      expect(failure).toBeNull();
    } finally {
      await suite.closeApps();
      client.disconnect();
    }
  });
});
