import { Inject, Injectable } from '@nestjs/common';
import { DistributedCron } from '@sundial/client';
import type { Catchup, JsonValue, OverlapPolicy, TimerContext } from '@sundial/core';
import { setTimeout as sleep } from 'node:timers/promises';
import { Outbox } from './outbox';
import { REPLICA } from './replica';

/**
 * Decorator options are read when the class is defined, so these come from the process environment:
 * DIGEST_CATCHUP = the row's `catchup` (slots missed while no run could start: 'skip' | 'once' | 'all');
 * DIGEST_OVERLAP = the row's `overlap` (a slot that comes while a run goes on, default 'skip');
 * DIGEST_WORK_MS = how long composing a digest takes (a stand-in for the real work, 0 by default).
 */
const CATCHUP = (process.env.DIGEST_CATCHUP || undefined) as Catchup | undefined;
const OVERLAP = (process.env.DIGEST_OVERLAP || undefined) as OverlapPolicy | undefined;
const WORK_MS = Number(process.env.DIGEST_WORK_MS ?? 0);

/** The daily digest: once per day cluster-wide, however many replicas run (DIGEST_CRON overrides it). */
@Injectable()
export class DigestService {
  constructor(
    @Inject(Outbox) private readonly outbox: Outbox,
    @Inject(REPLICA) private readonly replica: string,
  ) {}

  @DistributedCron(
    'reminders.digest',
    { config: 'DIGEST_CRON' },
    {
      timeZone: 'Europe/Paris',
      catchup: CATCHUP,
      overlap: OVERLAP,
    },
  )
  async send(_payload: JsonValue, ctx: TimerContext): Promise<void> {
    if (WORK_MS > 0) {
      // Says which replica is composing which slot, so a run can be told apart from its completion.
      await this.outbox.send({ kind: 'digest.started', due: ctx.due, replica: this.replica });
      await sleep(WORK_MS, undefined, { signal: ctx.signal });
    }
    await this.outbox.send({ kind: 'digest', due: ctx.due, replica: this.replica });
  }
}
