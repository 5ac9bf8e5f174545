import { type DynamicModule, Module } from '@nestjs/common';
import { SundialModule } from '@sundial/client';
import {
  normalizeAt,
  OptionReader,
  type JsonHandlers,
  type TimerHandlerMap,
  type ValidationLimits,
  VirtualClock,
} from '@sundial/core';
import { SettlingClock } from './settling-clock';

export interface SundialTestingModuleOptions {
  /** where the virtual clock starts: a Date, epoch ms or an ISO-8601 instant with offset (default: now) */
  now?: Date | number | string;
  /** plain handlers beside the app's `@OnTimer` / `@DistributedCron` methods */
  handlers?: TimerHandlerMap;
  /** as `SundialModule`'s, for apps whose crons are named with it */
  appName?: string;
  /**
   * as `SundialModule`'s (`{ maxPayloadBytes?, minEveryMs? }`): give the app's own, or a payload or period
   * it allows is refused in its tests (default 64 KiB, 100 ms)
   */
  limits?: Partial<ValidationLimits>;
  /**
   * how long `app.close()` lets running handlers end, on the virtual clock (default 0: their signals
   * abort at once, since no one advances the clock while the app closes); advance the clock to end it
   */
  shutdownGraceMs?: number;
  /**
   * real ms each tick of `clock.advance` waits for the runs it started to end (default 0: only handlers
   * that wait on promises alone settle within `advance`): give it when handlers await real I/O (a test
   * database, an HTTP stub), e.g. 2000. A run still going then (it waits on virtual time or its signal)
   * stays pending, as without it
   */
  settleMs?: number;
}

/**
 * Sundial for a test of the user's app (docs/spec.md §5.1): the memory backend on a `VirtualClock`,
 * running the same `@OnTimer` handlers and `@DistributedCron` rows as production. Import it instead of
 * `SundialModule` (and without `SundialWorkerModule`), get the clock with `app.get(VirtualClock)`, and
 * `await clock.advance('14d')` runs two weeks of timers in due order, in milliseconds.
 */
@Module({})
export class SundialTestingModule {
  /** `handlers` of typed payloads compile; one whose payload type is not JSON does not (JsonHandlers). */
  static forRoot<M extends TimerHandlerMap>(
    given?: SundialTestingModuleOptions & { handlers?: M } & JsonHandlers<M>,
  ): DynamicModule {
    const options: SundialTestingModuleOptions = given ?? {};
    const read = OptionReader.of(
      'SundialTestingModule',
      options,
      "SundialTestingModule.forRoot({ now: '2026-03-01T09:00:00Z' })",
    );
    read.only(['now', 'handlers', 'appName', 'limits', 'shutdownGraceMs', 'settleMs']);
    read.limits();
    read.handlers('handlers');
    read.integer('shutdownGraceMs', 0, '5000');
    read.timerMs('settleMs', 0, '2000');
    read.text('appName', 'billing');
    const { now } = options;
    // an Invalid Date is NaN: refused as the other non-instants
    const start =
      now === undefined ? Date.now() : normalizeAt(now instanceof Date ? now.getTime() : now, 'now');
    const { settleMs = 0 } = options;
    const clock = settleMs > 0 ? new SettlingClock(start, settleMs) : new VirtualClock(start);
    return {
      module: SundialTestingModule,
      global: true,
      imports: [
        SundialModule.forRoot({
          backend: 'memory',
          clock,
          handlers: options.handlers,
          appName: options.appName,
          limits: options.limits,
          shutdownGraceMs: options.shutdownGraceMs ?? 0,
        }),
      ],
      providers: [{ provide: VirtualClock, useValue: clock }],
      exports: [VirtualClock, SundialModule],
    };
  }
}
