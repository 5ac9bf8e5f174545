import { type DynamicModule, Module, type Provider } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { SundialErrorFilter } from '@sundial/client';
import { DigestService } from './digest.service';
import { FollowupController, FollowupService } from './followup.service';
import { HeartbeatService } from './heartbeat.service';
import { RemindersController } from './reminders.controller';
import { RemindersService } from './reminders.service';
import { REPLICA } from './replica';

export interface RemindersModuleOptions {
  /** the `Outbox` provider: Redis in production, memory in tests */
  outbox: Provider;
  replica: string;
  /** `false` leaves the digest out of the app, as if its @DistributedCron were deleted (default true) */
  digest?: boolean;
  /** `true` adds the follow-ups (followup.service.ts: a handler, its route and a cron) — a newer build */
  followups?: boolean;
}

/** The feature: reminders per entity over HTTP, the daily digest and the heartbeat. */
@Module({})
export class RemindersModule {
  static register(options: RemindersModuleOptions): DynamicModule {
    return {
      module: RemindersModule,
      controllers: [RemindersController, ...(options.followups ? [FollowupController] : [])],
      providers: [
        options.outbox,
        { provide: REPLICA, useValue: options.replica },
        RemindersService,
        HeartbeatService,
        // A refusal from Timers (a bad snooze, a reminder not found) answers 4xx with reason/field/fix.
        { provide: APP_FILTER, useClass: SundialErrorFilter },
        ...(options.digest === false ? [] : [DigestService]),
        ...(options.followups ? [FollowupService] : []),
      ],
      exports: [options.outbox, RemindersService],
    };
  }
}
