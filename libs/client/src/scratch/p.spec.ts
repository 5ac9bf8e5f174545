import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { DistributedCron, OnTimer, SundialModule } from '../index';

async function boot(imports: any[], providers: any[] = []) {
  const ref = await Test.createTestingModule({ imports: [SundialModule.forRoot({ backend: 'memory' }), ...imports], providers }).compile();
  const r = await ref.init().then(() => 'booted', (e: any) => `${e.field} | ${e.message} | ${e.fix}`);
  await ref.close();
  return r;
}
@Injectable() class Shared { @OnTimer('shared.run') run() {} }
@Module({ providers: [Shared] }) class M1 {}
@Module({ providers: [Shared] }) class M2 {}

it('p', async () => {
  console.log(await boot([M1, M2]));
  for (const o of [{ name: 'digest' }, { distributed: true }, { lockKey: 'x' }, { utcOffset: 60 }, { threshold: 250 }, { initialDelay: 5 }, { unrefTimeout: true }]) {
    @Injectable() class D { @DistributedCron('digest', '0 9 * * *', o as any) run() {} }
    console.log(JSON.stringify(o), await boot([], [D]));
  }
});
