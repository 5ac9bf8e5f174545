import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';
import { createBackend } from './create-backend';
import { ConfigurableSundialModule, SUNDIAL_MODULE_OPTIONS } from './sundial.module-definition';
import type { SundialModuleOptions } from './sundial-module-options';
import { Timers } from './timers';

/**
 * `SundialModule.forRoot({ connection: { url } })` or `.forRoot({ backend: 'memory' })`, and
 * `.forRootAsync({ imports, useFactory, inject })`: provides the injectable `Timers`.
 */
@Module({
  providers: [
    {
      provide: Timers,
      useFactory: (options: SundialModuleOptions) => createBackend(options),
      inject: [SUNDIAL_MODULE_OPTIONS],
    },
  ],
  exports: [Timers],
})
export class SundialModule extends ConfigurableSundialModule implements OnApplicationShutdown {
  constructor(@Inject(Timers) private readonly timers: Timers) {
    super();
  }

  async onApplicationShutdown(): Promise<void> {
    await this.timers.dispose();
  }
}
