import { Inject, Injectable } from '@nestjs/common';
import { DistributedCron } from '@sundial/client';
import type { JsonValue, TimerContext } from '@sundial/core';
import { Outbox } from './outbox';
import { REPLICA } from './replica';

/** The daily digest: once per day cluster-wide, however many replicas run (DIGEST_CRON overrides it). */
@Injectable()
export class DigestService {
  constructor(
    @Inject(Outbox) private readonly outbox: Outbox,
    @Inject(REPLICA) private readonly replica: string,
  ) {}

  @DistributedCron('reminders.digest', { config: 'DIGEST_CRON' }, { timeZone: 'Europe/Paris' })
  async send(_payload: JsonValue, ctx: TimerContext): Promise<void> {
    await this.outbox.send({ kind: 'digest', due: ctx.due, replica: this.replica });
  }
}
