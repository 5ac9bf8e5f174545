import { Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { VirtualClock, type TimerContext } from '@sundial/core';
import { type RedisServer, startRedis, waitFor } from '@sundial/testing/harness';
import { SundialModule, SundialWorkerModule, Timers } from './index';

@Injectable()
class InvoiceReminders {
  constructor(readonly timers: Timers) {}
}

/** `ok` ends its run; `boom` fails it */
const HANDLERS = {
  ok: () => undefined,
  boom: () => {
    throw new Error('boom');
  },
};

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

  // docs/spec.md §3.4, §5.1: the injected Timers tells a kept ended row removed from a live timer cancelled.
  it("the injected Timers answers cancelOutcome: cancelled, the removed kept row's status, or null", async () => {
    const clock = new VirtualClock(Date.parse('2026-03-01T00:00:00Z'));
    const moduleRef = await Test.createTestingModule({
      imports: [SundialModule.forRoot({ backend: 'memory', clock, handlers: HANDLERS })],
    }).compile();
    const timers = moduleRef.get(Timers);
    await expectCancelOutcomes(timers, async () => {
      await clock.advance('1s'); // virtual clock: both kept timers run
      return true;
    });
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

  // docs/spec.md §5.1: isGlobal defaults to true, in forRoot and forRootAsync alike.
  it.each([
    ['forRoot', () => SundialModule.forRoot({ backend: 'memory' })],
    [
      'forRootAsync',
      () => SundialModule.forRootAsync({ useFactory: () => ({ backend: 'memory' as const }) }),
    ],
  ])(
    '%s is global by default: Timers is injected in a module that does not import it',
    async (_, sundial) => {
      @Module({ imports: [sundial()] })
      class Scheduling {}
      @Module({ providers: [InvoiceReminders] })
      class Invoices {}
      const moduleRef = await Test.createTestingModule({ imports: [Scheduling, Invoices] }).compile();
      expect(moduleRef.get(InvoiceReminders).timers).toBe(moduleRef.get(Timers));
      await moduleRef.close();
    },
  );

  it('isGlobal: false provides Timers only to the module that imports SundialModule', async () => {
    @Module({ imports: [SundialModule.forRoot({ backend: 'memory', isGlobal: false })] })
    class Scheduling {}
    @Module({ providers: [InvoiceReminders] })
    class Invoices {}
    await expect(Test.createTestingModule({ imports: [Scheduling, Invoices] }).compile()).rejects.toThrow(
      "Nest can't resolve dependencies of the InvoiceReminders",
    );
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

    it('the injected Timers answers cancelOutcome on Redis as on the memory backend', async () => {
      const moduleRef = await Test.createTestingModule({
        imports: [
          SundialModule.forRoot({ connection: redis.url, prefix: 'outcome' }),
          SundialWorkerModule.forRoot({ prefix: 'outcome', dispatch: true, handlers: HANDLERS }),
        ],
      }).compile();
      const app = await moduleRef.init();
      const timers = app.get(Timers);
      // the worker here runs both kept timers (real time: expectCancelOutcomes waits for their ends)
      await expectCancelOutcomes(timers, async () => undefined);
      await app.close();
    });

    it('isGlobal: false hides SundialModule from SundialWorkerModule beside it: refused, field imports', async () => {
      // The refused boot sends no command: Timers opened no socket (test/client/failed-boot.test.ts).
      const connection = redis.url;
      const refused = await Test.createTestingModule({
        imports: [
          SundialModule.forRoot({ connection, prefix: 'hidden', isGlobal: false }),
          SundialWorkerModule.forRoot({ prefix: 'hidden' }),
        ],
      })
        .compile()
        .then(
          (moduleRef) => moduleRef.close(),
          (error: unknown) => error,
        );
      expect(refused).toMatchObject({
        reason: 'invalid',
        field: 'imports',
        fix: expect.stringContaining('isGlobal'),
      });
    });

    // docs/spec.md §5.1, §5.4: a user's app reads SUNDIAL_LEDGER as the apps do, when `ledger` is left out.
    it('ledger left out is the process environment SUNDIAL_LEDGER (off: no history); an option wins', async () => {
      const historyOf = async (prefix: string, ledger?: number): Promise<number> => {
        const moduleRef = await Test.createTestingModule({
          imports: [SundialModule.forRoot({ connection: redis.url, prefix, ledger })],
        }).compile();
        const timers = moduleRef.get(Timers);
        await timers.schedule({ key: 'k', handler: 'h', delay: '1h' });
        await timers.pause('k');
        const entries = (await timers.history('k')).length;
        await moduleRef.close();
        return entries;
      };
      process.env.SUNDIAL_LEDGER = 'off';
      try {
        expect(await historyOf('ledger-off')).toBe(0);
        expect(await historyOf('ledger-option', 50)).toBeGreaterThan(0);
      } finally {
        delete process.env.SUNDIAL_LEDGER;
      }
      expect(await historyOf('ledger-default')).toBeGreaterThan(0);
    });
  });
});

/**
 * Through the injected `Timers`: a kept one-shot that completed and one that failed are removed (their
 * status answered), a live one cancelled, a key with no row `null`; `settle` lets the runs happen.
 */
async function expectCancelOutcomes(timers: Timers, settle: () => Promise<unknown>): Promise<void> {
  const kept = { handler: 'ok', delay: 0, removeOnComplete: false };
  await timers.schedule({ key: 'done', ...kept });
  await timers.schedule({ key: 'bad', ...kept, handler: 'boom' });
  await timers.schedule({ key: 'live', handler: 'ok', delay: '1h' });
  await settle();
  const ended = async () =>
    (await timers.get('done'))?.status === 'completed' && (await timers.get('bad'))?.status === 'failed';
  // deadline (waitFor's 10 s): left as soon as both have ended
  await waitFor(ended, { what: 'done completed and bad failed' });
  expect(await timers.cancelOutcome('done')).toBe('completed');
  expect(await timers.cancelOutcome('bad')).toBe('failed');
  expect(await timers.cancelOutcome('live')).toBe('cancelled');
  expect(await timers.cancelOutcome('never')).toBeNull();
  for (const key of ['done', 'bad', 'live']) expect(await timers.get(key)).toBeNull();
}
