// @sundial/testing: Sundial in a test of the user's Nest app — the memory backend on a VirtualClock
// (docs/spec.md §5.1). This checkout's own test harness is `@sundial/testing/harness` (./harness).
export {
  SundialTestingModule,
  type SundialTestingModuleOptions,
} from './testing-module/sundial-testing.module';
