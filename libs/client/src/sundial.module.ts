import {
  type BeforeApplicationShutdown,
  type DynamicModule,
  Inject,
  Module,
  type OnApplicationShutdown,
} from '@nestjs/common';
import type { JsonHandlers, TimerHandlerMap } from '@sundial/core';
import { DiscoveryModule } from '@nestjs/core';
import { createBackend } from './create-backend';
import { CronRegistrar } from './cron/cron-registrar';
import { TimerHandlerRegistry } from './handler-registry';
import { OwnRunner } from './own-runner';
import { checkSundialModuleOptions } from './module-option-checks';
import {
  ConfigurableSundialModule,
  SUNDIAL_MODULE_GIVEN_OPTIONS,
  SUNDIAL_MODULE_OPTIONS,
} from './sundial.module-definition';
import type {
  MemoryBackendOptions,
  RedisBackendOptions,
  SundialModuleAsyncOptions,
  SundialModuleOptions,
  SundialOptionsFactory,
} from './sundial-module-options';
import { TimerExplorer } from './timer-explorer';
import { Timers } from './timers';

/**
 * `SundialModule.forRoot({ connection: { url } })` or `.forRoot({ backend: 'memory' })`, and
 * `.forRootAsync({ imports, useFactory, inject })`: provides the injectable `Timers`, finds the app's
 * `@OnTimer` / `@DistributedCron` methods and keeps the `@DistributedCron` rows. With the memory backend
 * the handlers run in this process; with Redis, `SundialWorkerModule` runs them (or apps/worker).
 */
@Module({
  imports: [DiscoveryModule],
  providers: [
    // A wrong option stops the boot here, before a connection is opened or a row written.
    {
      provide: SUNDIAL_MODULE_OPTIONS,
      useFactory: checkSundialModuleOptions,
      inject: [SUNDIAL_MODULE_GIVEN_OPTIONS],
    },
    {
      provide: TimerHandlerRegistry,
      useFactory: (options: SundialModuleOptions) =>
        options.backend === 'memory'
          ? new TimerHandlerRegistry(options.handlers, undefined, options.clock)
          : new TimerHandlerRegistry(),
      inject: [SUNDIAL_MODULE_OPTIONS],
    },
    {
      provide: Timers,
      useFactory: (options: SundialModuleOptions, registry: TimerHandlerRegistry) =>
        createBackend(options, registry),
      inject: [SUNDIAL_MODULE_OPTIONS, TimerHandlerRegistry],
    },
    TimerExplorer,
    // where SundialWorkerModule's runner tells the registrar it announced the app's handlers
    { provide: OwnRunner, useFactory: () => new OwnRunner() },
    CronRegistrar,
  ],
  // CronRegistrar: its rows(), the app's declared rows and their next runs
  exports: [Timers, TimerHandlerRegistry, CronRegistrar, SUNDIAL_MODULE_OPTIONS, OwnRunner],
})
export class SundialModule
  extends ConfigurableSundialModule
  implements BeforeApplicationShutdown, OnApplicationShutdown
{
  /**
   * ConfigurableModuleBuilder's forRoot, typed so that `handlers` (memory backend) of typed payloads
   * compile and one whose payload type is not JSON does not (JsonHandlers).
   */
  static override forRoot<M extends TimerHandlerMap>(
    options: (RedisBackendOptions | (MemoryBackendOptions & { handlers?: M })) &
      JsonHandlers<M> & { isGlobal?: boolean },
  ): DynamicModule {
    return super.forRoot(options);
  }

  /**
   * ConfigurableModuleBuilder's forRootAsync, typed so that the `handlers` a factory returns are checked
   * as forRoot's are (JsonHandlers): they were typed TimerHandlerMap, and any payload type compiled.
   */
  static override forRootAsync<M extends TimerHandlerMap, C extends SundialOptionsFactory>(
    options: SundialModuleAsyncOptions<M, C> & { isGlobal?: boolean },
  ): DynamicModule {
    return super.forRootAsync(options);
  }

  constructor(
    @Inject(Timers) private readonly timers: Timers,
    @Inject(SUNDIAL_MODULE_OPTIONS) private readonly options: SundialModuleOptions,
  ) {
    super();
  }

  /**
   * The memory backend runs the handlers: it drains here, as SundialWorkerModule's worker does on Redis,
   * before any provider's onApplicationShutdown closes what they use (a database client). In that hook,
   * a module nearer the root than this one closed its provider first: runs of the grace found it closed.
   */
  async beforeApplicationShutdown(): Promise<void> {
    if (this.options.backend === 'memory') await this.timers.dispose();
  }

  /** Redis: the connections, once the worker module has drained (its handlers may call Timers). */
  async onApplicationShutdown(): Promise<void> {
    await this.timers.dispose();
  }
}
