import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { VirtualClock, type TimerContext } from '@sundial/core';
import { type RedisServer, startRedis } from '@sundial/testing';
import { SundialModule, Timers } from './index';

@Injectable()
class InvoiceReminders {
  constructor(readonly timers: Timers) {}
}

describe('SundialModule', () => {
  it('forRoot with the memory backend injects Timers that run on the given clock', async () => {
    const clock = new VirtualClock(Date.parse('2026-03-01T00:00:00Z'));
    const runs: TimerContext[] = [];
    const moduleRef = await Test.createTestingModule({
      imports: [
        SundialModule.forRoot({
          backend: 'memory',
          clock,
          handlers: { 'invoice.remind': (_payload, ctx) => void runs.push(ctx) },
        }),
      ],
      providers: [InvoiceReminders],
    }).compile();
    const { timers } = moduleRef.get(InvoiceReminders);

    await timers.schedule({ key: 'invoice:42', handler: 'invoice.remind', delay: '3d' });
    await clock.advance('2d');
    expect(runs).toHaveLength(0);
    await clock.advance('1d');
    expect(runs.map((ctx) => [ctx.key, ctx.due])).toEqual([
      ['invoice:42', Date.parse('2026-03-04T00:00:00Z')],
    ]);
    await moduleRef.close();
  });

  it('closing the application disposes the backend', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [SundialModule.forRoot({ backend: 'memory' })],
    }).compile();
    const timers = moduleRef.get(Timers);
    await moduleRef.close();
    await expect(timers.schedule({ key: 'k', handler: 'h', delay: 10 })).rejects.toMatchObject({
      reason: 'disposed',
    });
  });

  describe('with Redis', () => {
    let redis: RedisServer;
    beforeAll(async () => {
      redis = await startRedis();
    });
    afterAll(async () => {
      await redis.stop();
    });

    it('forRootAsync builds the options from injected config and keeps timers in Redis', async () => {
      @Module({ providers: [{ provide: 'REDIS_URL', useValue: redis.url }], exports: ['REDIS_URL'] })
      class ConfigModule {}

      const moduleRef = await Test.createTestingModule({
        imports: [
          SundialModule.forRootAsync({
            imports: [ConfigModule],
            useFactory: (url: string) => ({ connection: { url }, prefix: 'app' }),
            inject: ['REDIS_URL'],
          }),
        ],
      }).compile();
      const timers = moduleRef.get(Timers);

      const timer = await timers.schedule({ key: 'invoice:7', handler: 'invoice.remind', delay: '1h' });
      expect(await timers.get('invoice:7')).toMatchObject({ id: timer.id, status: 'pending' });
      expect(await timers.check(timer.id)).toBe(true);
      await moduleRef.close();
    });
  });
});
