import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { SundialHealthIndicator } from './sundial-health.indicator';

/** Import beside `SundialModule` to inject `SundialHealthIndicator` into the app's health controller. */
@Module({
  imports: [TerminusModule],
  providers: [SundialHealthIndicator],
  exports: [SundialHealthIndicator],
})
export class SundialHealthModule {}
