export * from './sundial-module-options';
export { SUNDIAL_MODULE_OPTIONS } from './sundial.module-definition';
export * from './sundial.module';
export * from './timers';
