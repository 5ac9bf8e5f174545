import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { SundialError } from '@sundial/core';
import { DistributedCron, SundialModule } from '../index';

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
