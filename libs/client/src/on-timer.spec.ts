import { Controller, Injectable, Module } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { type JsonValue, type TimerContext, VirtualClock } from '@sundial/core';
import { DistributedCron, OnTimer, SundialModule, Timers } from './index';

@Injectable()
class Mailer {
  readonly sent: string[] = [];
  send(to: string): void {
    this.sent.push(to);
  }
}

@Injectable()
class InvoiceReminders {
  readonly seen: { payload: JsonValue; ctx: TimerContext; aborted: boolean }[] = [];
  constructor(private readonly mailer: Mailer) {}

  @OnTimer('invoice.remind')
  remind(payload: JsonValue, ctx: TimerContext): void {
    this.mailer.send((payload as { to: string }).to);
    this.seen.push({ payload, ctx, aborted: ctx.signal.aborted });
  }
}

@Injectable()
class OtherReminders {
  @OnTimer('invoice.remind')
  remindAgain(): void {}
}

describe('@OnTimer on the memory backend', () => {
  it('runs the decorated method in its provider, with DI, payload and ctx', async () => {
    const clock = new VirtualClock(Date.parse('2026-03-01T00:00:00Z'));
    const moduleRef = await Test.createTestingModule({
      imports: [SundialModule.forRoot({ backend: 'memory', clock })],
      providers: [Mailer, InvoiceReminders],
    }).compile();
    await moduleRef.init();
    const timers = moduleRef.get(Timers);
    const timer = await timers.schedule({
      key: 'invoice:42',
      handler: 'invoice.remind',
      payload: { to: 'ada@example.com' },
      delay: '3d',
    });

    await clock.advance('3d');
    const { seen } = moduleRef.get(InvoiceReminders);
    expect(moduleRef.get(Mailer).sent).toEqual(['ada@example.com']);
    expect(seen).toHaveLength(1);
    expect(seen[0].payload).toEqual({ to: 'ada@example.com' });
    expect(seen[0].aborted).toBe(false);
    expect(seen[0].ctx).toMatchObject({
      key: 'invoice:42',
      id: timer.id,
      version: 1,
      due: Date.parse('2026-03-04T00:00:00Z'),
    });
    await moduleRef.close();
  });

  it('a handler name declared twice stops the app at boot, naming both methods', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [SundialModule.forRoot({ backend: 'memory' })],
      providers: [Mailer, InvoiceReminders, OtherReminders],
    }).compile();
    const refused = await moduleRef.init().catch((error: unknown) => error);
    expect(refused).toMatchObject({ reason: 'invalid', field: 'handler' });
    expect((refused as Error).message).toBe(
      "The timer handler 'invoice.remind' is declared twice: by InvoiceReminders.remind and by OtherReminders.remindAgain.",
    );
    await moduleRef.get(Timers).dispose();
  });

  it('a handler name no timer could use stops the app at boot, naming the method', async () => {
    @Injectable()
    class Spaced {
      @OnTimer('send email')
      send(): void {}
    }
    const moduleRef = await Test.createTestingModule({
      imports: [SundialModule.forRoot({ backend: 'memory' })],
      providers: [Spaced],
    }).compile();
    const refused = await moduleRef.init().catch((error: unknown) => error);
    expect(refused).toMatchObject({
      reason: 'invalid',
      field: 'handler',
      message: 'Spaced.send: handler "send email" contains " " at position 5',
    });
    await moduleRef.close();
  });

  it('refuses a misspelt handler name, the fix naming the @OnTimer method to write', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [SundialModule.forRoot({ backend: 'memory' })],
      providers: [Mailer, InvoiceReminders],
    }).compile();
    await moduleRef.init();
    const refused = moduleRef.get(Timers).schedule({ key: 'k', handler: 'invoice.remindd', delay: '1d' });
    await expect(refused).rejects.toMatchObject({
      reason: 'invalid',
      field: 'handler',
      fix: `Did you mean "invoice.remind"? Use it, or register "invoice.remindd": an @OnTimer('invoice.remindd') method in a Nest app, or createEngine({ handlers }).`,
    });
    await moduleRef.close();
  });

  it('finds the methods of a controller too, as @nestjs/schedule finds its @Cron methods', async () => {
    @Controller('reports')
    class ReportsController {
      readonly runs: string[] = [];
      @OnTimer('reports.ping')
      ping(_payload: JsonValue, ctx: TimerContext): void {
        this.runs.push(ctx.key);
      }
    }
    const clock = new VirtualClock(0);
    const moduleRef = await Test.createTestingModule({
      imports: [SundialModule.forRoot({ backend: 'memory', clock })],
      controllers: [ReportsController],
    }).compile();
    await moduleRef.init();
    await moduleRef.get(Timers).schedule({ key: 'ping:1', handler: 'reports.ping', delay: 10 });
    await clock.advance(10);
    expect(moduleRef.get(ReportsController).runs).toEqual(['ping:1']);
    await moduleRef.close();
  });

  it('finds handlers in providers of imported modules, beside the handlers option', async () => {
    @Module({ providers: [Mailer, InvoiceReminders] })
    class RemindersModule {}
    const clock = new VirtualClock(0);
    const plain: string[] = [];
    const moduleRef = await Test.createTestingModule({
      imports: [
        SundialModule.forRoot({
          backend: 'memory',
          clock,
          handlers: { plain: (_p, ctx) => void plain.push(ctx.key) },
        }),
        RemindersModule,
      ],
    }).compile();
    await moduleRef.init();
    const timers = moduleRef.get(Timers);
    await timers.schedule({ key: 'a', handler: 'plain', delay: 10 });
    await timers.schedule({ key: 'b', handler: 'invoice.remind', payload: { to: 'b@x' }, delay: 10 });
    await clock.advance(10);
    expect(plain).toEqual(['a']);
    expect(moduleRef.get(Mailer).sent).toEqual(['b@x']);
    await moduleRef.close();
  });

  it("bounds a run by the decorator's timeout on the module's clock, and refuses a bad one at boot", async () => {
    @Injectable()
    class Exports {
      readonly signals: AbortSignal[] = [];
      @OnTimer('export.run', { timeout: '5m' })
      run(_payload: JsonValue, ctx: TimerContext): Promise<void> {
        this.signals.push(ctx.signal);
        return new Promise(() => undefined); // never ends
      }
      @DistributedCron('export.nightly', '0 2 * * *', { timeout: '1h' })
      nightly(_payload: JsonValue, ctx: TimerContext): Promise<void> {
        return this.run(_payload, ctx);
      }
    }
    const clock = new VirtualClock(Date.parse('2026-03-01T00:00:00Z'));
    const moduleRef = await Test.createTestingModule({
      imports: [SundialModule.forRoot({ backend: 'memory', clock })],
      providers: [Exports],
    }).compile();
    await moduleRef.init();
    const timers = moduleRef.get(Timers);
    await timers.schedule({ key: 'e', handler: 'export.run', delay: 0, removeOnComplete: false });
    await clock.advance('4m');
    expect((await timers.get('e'))?.status).toBe('running');
    await clock.advance('1m');
    expect((await timers.get('e'))?.last?.error).toMatchObject({ reason: 'timeout' });
    await clock.advance('3h');
    const nightly = await timers.get('cron:export.nightly');
    expect(nightly).toMatchObject({
      status: 'pending',
      last: { status: 'failed', error: { reason: 'timeout' } },
    });
    expect(nightly?.last?.ended).toBe(Date.parse('2026-03-01T03:00:00Z'));
    expect(moduleRef.get(Exports).signals.every((signal) => signal.aborted)).toBe(true);
    await moduleRef.close();

    @Injectable()
    class Typo {
      @OnTimer('typo', { timeout: '5 mins' as '5m' })
      run(): void {}
    }
    const refusedRef = await Test.createTestingModule({
      imports: [SundialModule.forRoot({ backend: 'memory' })],
      providers: [Typo],
    }).compile();
    const refused = await refusedRef.init().catch((error: unknown) => error);
    expect(refused).toMatchObject({ reason: 'invalid', field: 'timeout', fix: 'Write timeout as "5m".' });
    expect((refused as Error).message).toBe('Typo.run: timeout "5 mins" is not a duration');
    await refusedRef.get(Timers).dispose();
  });

  it('registers a handler whose name Object.prototype also has as a name like any other', async () => {
    @Injectable()
    class Odd {
      readonly ran: string[] = [];
      @OnTimer('__proto__')
      proto(_payload: JsonValue, ctx: TimerContext): void {
        this.ran.push(ctx.key);
      }
      @OnTimer('toString')
      text(_payload: JsonValue, ctx: TimerContext): void {
        this.ran.push(ctx.key);
      }
    }
    const clock = new VirtualClock(0);
    const moduleRef = await Test.createTestingModule({
      imports: [SundialModule.forRoot({ backend: 'memory', clock })],
      providers: [Odd],
    }).compile();
    await moduleRef.init();
    const timers = moduleRef.get(Timers);
    await timers.schedule({ key: 'a', handler: '__proto__', delay: 1 });
    await timers.schedule({ key: 'b', handler: 'toString', delay: 1 });
    await clock.advance(1);
    expect(moduleRef.get(Odd).ran.sort()).toEqual(['a', 'b']);
    await moduleRef.close();
  });
});
