import { Body, Controller, Inject, Injectable, Param, Post } from '@nestjs/common';
import { DistributedCron, OnTimer, Timers } from '@sundial/client';
import type { JsonValue, Timer, TimerContext } from '@sundial/core';
import { Outbox } from './outbox';
import { REPLICA } from './replica';

/**
 * A second build of the app for rolling-deploy walks (examples/reminders/test/rolling-deploy.test.ts):
 * with FOLLOWUPS_ENABLED=true the app has a handler (`reminder.followup`), a route that schedules it and
 * a cron (`reminders.sweep`, every FOLLOWUPS_SWEEP_CRON, default every 2 s) that the build without it
 * lacks — what a release that adds an @OnTimer and a @DistributedCron looks like.
 */
@Injectable()
export class FollowupService {
  constructor(
    @Inject(Timers) private readonly timers: Timers,
    @Inject(Outbox) private readonly outbox: Outbox,
    @Inject(REPLICA) private readonly replica: string,
  ) {}

  schedule(entity: string, id: string, delay: number): Promise<Timer> {
    const key = `followup:${entity}:${id}`;
    return this.timers.schedule({ key, handler: 'reminder.followup', payload: { entity, id }, delay });
  }

  @OnTimer('reminder.followup')
  async followup(payload: JsonValue, ctx: TimerContext): Promise<void> {
    const { entity, id } = payload as { entity: string; id: string };
    // `at`: when it ran, so a run's lateness (a run passed on by a replica without this handler) shows
    const at = Date.now();
    await this.outbox.send({ kind: 'followup', due: ctx.due, replica: this.replica, entity, text: id, at });
  }

  @DistributedCron('reminders.sweep', process.env.FOLLOWUPS_SWEEP_CRON || '*/2 * * * * *')
  async sweep(_payload: JsonValue, ctx: TimerContext): Promise<void> {
    await this.outbox.send({ kind: 'sweep', due: ctx.due, replica: this.replica });
  }
}

/** `POST /entities/:entity/followups/:id` `{ delay }` (ms): schedules a follow-up. */
@Controller('entities/:entity/followups')
export class FollowupController {
  constructor(@Inject(FollowupService) private readonly followups: FollowupService) {}

  @Post(':id')
  create(
    @Param('entity') entity: string,
    @Param('id') id: string,
    @Body() body: { delay: number },
  ): Promise<Timer> {
    return this.followups.schedule(entity, id, body.delay);
  }
}
