import { Injectable, Logger } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { Test, type TestingModule } from '@nestjs/testing';
import { SundialError } from '@sundial/core';
import { waitFor } from '@sundial/testing/harness';
import { Redis } from 'ioredis';
import { registrarOnRedis } from '../../../../test/client/registrar-on-redis';
import { DistributedCron, SundialModule, Timers } from '../index';

const DIGEST_CRON = Symbol('DIGEST_CRON');

@Injectable()
class FromConfig {
  @DistributedCron('digest', { config: 'DIGEST_CRON' })
  digest(): void {}
}

@Injectable()
class FromProvider {
  @DistributedCron('digest', { inject: DIGEST_CRON })
  digest(): void {}
}

/** What stops the boot of an app holding `provider` on the memory backend, and nothing else. */
async function bootRefusal(provider: new () => object): Promise<unknown> {
  const moduleRef = await Test.createTestingModule({
    imports: [SundialModule.forRoot({ backend: 'memory' })],
    providers: [provider],
  }).compile();
  const refused = await moduleRef.init().catch((error: unknown) => error);
  await moduleRef.close();
  return refused;
}

describe('@DistributedCron whose expression the app does not provide', () => {
  // Each stops the boot with a refusal naming the decorator, where the expression was to come from and what to provide.
  it.each([
    [
      '{ config } without ConfigModule',
      FromConfig,
      "on FromConfig.digest: its expression comes from the config key 'DIGEST_CRON', but this app provides no ConfigService.",
      'Import ConfigModule.forRoot({ isGlobal: true })',
    ],
    [
      '{ inject } of a token nobody provides',
      FromProvider,
      'on FromProvider.digest: its expression comes from the provider Symbol(DIGEST_CRON), but this app provides no Symbol(DIGEST_CRON).',
      'Provide Symbol(DIGEST_CRON)',
    ],
  ])('%s', async (_case, provider, message, fix) => {
    const refused = await bootRefusal(provider);
    expect(refused).toBeInstanceOf(SundialError);
    expect(refused).toMatchObject({
      reason: 'invalid',
      field: 'cron',
      message: `@DistributedCron('digest') ${message}`,
      fix: expect.stringContaining(fix),
    });
  });
});

/** The build running before a deploy whose config gives the expression. */
@Injectable()
class InCode {
  @DistributedCron('digest', '0 9 * * *')
  digest(): void {}
}

describe('@DistributedCron whose source gives an expression that is not valid', () => {
  const redisApps = registrarOnRedis('badcron');
  const apps: TestingModule[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
    jest.restoreAllMocks();
  });

  it('memory backend: stops the boot naming the decorator, the config key and the value', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ConfigModule.forRoot({ ignoreEnvFile: true, load: [() => ({ DIGEST_CRON: '61 * * * *' })] }),
        SundialModule.forRoot({ backend: 'memory' }),
      ],
      providers: [FromConfig],
    }).compile();
    apps.push(moduleRef);
    const refused = await moduleRef.init().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(SundialError);
    expect(refused).toMatchObject({
      reason: 'invalid',
      field: 'cron',
      message: expect.stringMatching(
        /^@DistributedCron\('digest'\) on FromConfig\.digest: the config key 'DIGEST_CRON' gives "61 \* \* \* \*": /,
      ),
      fix: expect.any(String),
    });
  });

  /**
   * A build whose config gives a bad expression, rolled out beside a running build: its replica
   * announced its declaration set (the newest) before its write was refused, so for as long as it
   * crash-looped the running replicas deferred to it — after a reset, no replica wrote the rows again.
   */
  it('Redis: the refused replica announces no declaration set; the running build keeps its rows, after a reset too', async () => {
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    const running = await redisApps.boot([InCode], { appName: 'billing', into: apps });
    const refused = await redisApps
      .boot([FromConfig], { appName: 'billing', config: { DIGEST_CRON: 'every day' }, into: apps })
      .catch((error: unknown) => error);
    expect(refused).toMatchObject({ reason: 'invalid', field: 'cron' });
    const raw = new Redis(redisApps.url());
    const sets = Object.keys(await raw.hgetall(`${redisApps.prefix()}:cron-sets:billing`));
    raw.disconnect();
    expect(sets.filter((field) => field.startsWith('s:'))).toHaveLength(1);
    const timers = running.get(Timers);
    await timers.cancelAll();
    // within one look (5 s): the reset's own pass, not the refused set's lapse (three looks), writes it
    const row = await waitFor(async () => (await timers.get('cron:digest')) ?? undefined, {
      timeoutMs: 2_000, // deadline
      what: 'the running build to write its row again after the reset',
    });
    expect(row).toMatchObject({ cron: '0 9 * * *', meta: { sundialApp: 'billing' } });
  });
});
