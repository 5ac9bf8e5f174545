import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { SundialModuleOptions } from './sundial-module-options';

export const {
  ConfigurableModuleClass: ConfigurableSundialModule,
  MODULE_OPTIONS_TOKEN: SUNDIAL_MODULE_GIVEN_OPTIONS,
} = new ConfigurableModuleBuilder<SundialModuleOptions>()
  .setClassMethodName('forRoot')
  .setExtras({ isGlobal: true }, (definition, extras) => ({ ...definition, global: extras.isGlobal }))
  .build();

/** SundialModule's options as checked at boot (checkSundialModuleOptions): what every provider reads. */
export const SUNDIAL_MODULE_OPTIONS = Symbol('SUNDIAL_MODULE_OPTIONS');
