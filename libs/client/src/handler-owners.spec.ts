import { Inject, Injectable, Module, Scope } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { type JsonValue, type TimerContext, VirtualClock } from '@sundial/core';
import { DistributedCron, OnTimer, SundialModule, TimerHandlerRegistry, Timers } from './index';

/** Boots `providers` on the memory backend at a virtual 2026-03-01: the app, or what its init refused. */
async function boot(providers: (new (...args: never[]) => unknown)[]) {
  const clock = new VirtualClock(Date.parse('2026-03-01T00:00:00Z'));
  const moduleRef = await Test.createTestingModule({
    imports: [SundialModule.forRoot({ backend: 'memory', clock })],
    providers,
  }).compile();
  const refused = await moduleRef.init().then(
    () => undefined,
    (error: unknown) => error,
  );
  return { moduleRef, clock, refused };
}

@Injectable()
class Mailer {
  readonly sent: string[] = [];
}

describe('which methods handle timers, and on which instance', () => {
  it('a method under two @OnTimer names runs for each (a handler renamed while timers of its old name wait)', async () => {
    @Injectable()
    class Reminders {
      constructor(@Inject(Mailer) private readonly mailer: Mailer) {}

      @OnTimer('invoices.remind')
      @OnTimer('invoice.remind', { timeout: '1m' })
      remind(payload: JsonValue, ctx: TimerContext): void {
        this.mailer.sent.push(`${ctx.key} ${String(payload)}`);
      }
    }
    const { moduleRef, clock, refused } = await boot([Mailer, Reminders]);
    expect(refused).toBeUndefined();
    const registry = moduleRef.get(TimerHandlerRegistry);
    expect(Object.keys(registry.handlers)).toEqual(['invoices.remind', 'invoice.remind']);
    const timers = moduleRef.get(Timers);
    await timers.schedule({ key: 'old', handler: 'invoice.remind', payload: 1, delay: 10 });
    await timers.schedule({ key: 'new', handler: 'invoices.remind', payload: 2, delay: 20 });
    await clock.advance(30);
    expect(moduleRef.get(Mailer).sent).toEqual(['old 1', 'new 2']);
    await moduleRef.close();
  });

  it('two @DistributedCron on one method keep a row each, and a name stacked twice is refused as twice declared', async () => {
    @Injectable()
    class Digest {
      @DistributedCron('digest.weekdays', '0 9 * * 1-5')
      @DistributedCron('digest.weekend', '0 11 * * 0,6')
      send(): void {}
    }
    const { moduleRef, refused } = await boot([Digest]);
    expect(refused).toBeUndefined();
    expect(moduleRef.get(TimerHandlerRegistry).crons.map((row) => row.name)).toEqual([
      'digest.weekdays',
      'digest.weekend',
    ]);
    await moduleRef.close();

    @Injectable()
    class Twice {
      @OnTimer('twice.run')
      @OnTimer('twice.run')
      run(): void {}
    }
    const second = await boot([Twice]);
    expect(second.refused).toMatchObject({
      reason: 'invalid',
      field: 'handler',
      message:
        "The timer handler 'twice.run' is declared twice on Twice.run: two of its decorators give that name.",
    });
    await second.moduleRef.close();
  });

  it('a provider listed in two modules is refused as two instances of it, not as a name declared twice by itself', async () => {
    @Injectable()
    class Shared {
      @OnTimer('shared.run')
      run(): void {}
    }
    @Module({ providers: [Shared] })
    class Billing {}
    @Module({ providers: [Shared] })
    class Reports {}
    const moduleRef = await Test.createTestingModule({
      imports: [SundialModule.forRoot({ backend: 'memory' }), Billing, Reports],
    }).compile();
    expect(await moduleRef.init().catch((error: unknown) => error)).toMatchObject({
      reason: 'invalid',
      field: 'handler',
      message: expect.stringContaining('Shared.run is found on two instances of Shared'),
      fix: expect.stringContaining('Provide Shared in one module and export it'),
    });
    await moduleRef.close();
  });

  it('one instance under two tokens (a useExisting alias) is one handler, run once', async () => {
    @Injectable()
    class Billing {
      readonly ran: string[] = [];
      @OnTimer('billing.close')
      close(payload: JsonValue): void {
        this.ran.push(String(payload));
      }
    }
    abstract class BillingPort {}
    const clock = new VirtualClock(Date.parse('2026-03-01T00:00:00Z'));
    const moduleRef = await Test.createTestingModule({
      imports: [SundialModule.forRoot({ backend: 'memory', clock })],
      providers: [Billing, { provide: BillingPort, useExisting: Billing }],
    }).compile();
    // Before, the alias's wrapper listed the same instance again: the boot stopped, saying "found on two
    // instances of Billing", of a class Nest had made once.
    await moduleRef.init();
    await moduleRef
      .get(Timers)
      .schedule({ key: 'b', handler: 'billing.close', payload: 'march', delay: '1d' });
    await clock.advance('1d');
    expect(moduleRef.get(Billing).ran).toEqual(['march']);
    await moduleRef.close();
  });

  it('a decorator on a getter is refused where the class is defined, naming it (not a TypeError)', () => {
    const define = () => {
      class Odd {
        @OnTimer('odd.run')
        get run(): () => void {
          return () => undefined;
        }
      }
      return Odd;
    };
    expect(define).toThrow(
      expect.objectContaining({
        reason: 'invalid',
        field: 'handler',
        message: "@OnTimer('odd.run') goes on a method, and Odd.run is not one (a getter or a field).",
      }),
    );
  });

  it('a decorator on a static method is refused where the class is defined (it was never found)', () => {
    const define = () => {
      class Reports {
        @DistributedCron('reports.nightly', '0 2 * * *')
        static nightly(): void {}
      }
      return Reports;
    };
    expect(define).toThrow(
      expect.objectContaining({
        reason: 'invalid',
        field: 'handler',
        message:
          "@DistributedCron('reports.nightly') goes on an instance method, and Reports.nightly is static: Sundial finds the methods of a provider's instance, never a static one.",
      }),
    );
  });

  it('a transient provider is refused: the instance Nest lists for it was never constructed', async () => {
    @Injectable({ scope: Scope.TRANSIENT })
    class Transient {
      constructor(@Inject(Mailer) private readonly mailer: Mailer) {}

      @OnTimer('transient.run')
      run(): void {
        this.mailer.sent.push('ran');
      }
    }
    const { moduleRef, refused } = await boot([Mailer, Transient]);
    expect(refused).toMatchObject({
      reason: 'invalid',
      field: 'handler',
      message: expect.stringContaining('Transient.run handles timers but Transient is transient'),
      fix: expect.stringContaining('singleton'),
    });
    await moduleRef.close();
  });

  it('a singleton that depends on a request-scoped provider is refused, the message saying why it is request-scoped', async () => {
    @Injectable({ scope: Scope.REQUEST })
    class RequestUser {}
    @Injectable()
    class Audit {
      constructor(@Inject(RequestUser) readonly user: RequestUser) {}

      @OnTimer('audit.flush')
      flush(): void {}
    }
    const { moduleRef, refused } = await boot([RequestUser, Audit]);
    expect(refused).toMatchObject({
      reason: 'invalid',
      field: 'handler',
      message: expect.stringContaining('Audit is request-scoped (itself, or through a provider it injects)'),
    });
    await moduleRef.close();
  });

  it('a second SundialModule in one app is refused: each would run every @DistributedCron slot', async () => {
    const clock = new VirtualClock(Date.parse('2026-03-01T00:00:00Z'));
    @Module({ imports: [SundialModule.forRoot({ backend: 'memory', clock, appName: 'billing' })] })
    class Billing {}
    @Module({ imports: [SundialModule.forRoot({ backend: 'memory', clock, appName: 'reports' })] })
    class Reports {}
    @Injectable()
    class Digest {
      @DistributedCron('digest.hourly', '0 * * * *')
      send(): void {}
    }
    const moduleRef = await Test.createTestingModule({
      imports: [Billing, Reports],
      providers: [Digest],
    }).compile();
    const refused = await moduleRef.init().catch((error: unknown) => error);
    expect(refused).toMatchObject({
      reason: 'invalid',
      field: 'imports',
      message: expect.stringContaining(
        "SundialModule is in this app 2 times (memory, appName 'billing'; memory, appName 'reports')",
      ),
      fix: expect.stringContaining('once'),
    });
    await moduleRef.close();
  });
});
