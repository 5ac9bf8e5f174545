import { Inject, Injectable } from '@nestjs/common';
import { DistributedInterval } from '@sundial/client';
import type { TimerContext } from '@sundial/core';
import { Outbox } from './outbox';
import { REPLICA } from './replica';

/**
 * A heartbeat every HEARTBEAT_EVERY (default 5m), once per period however many replicas run: the row
 * `interval:reminders.heartbeat`, kept by every replica at boot (a changed HEARTBEAT_EVERY replaces it,
 * removing the method removes it, a Redis that lost its data gets it back).
 */
@Injectable()
export class HeartbeatService {
  constructor(
    @Inject(Outbox) private readonly outbox: Outbox,
    @Inject(REPLICA) private readonly replica: string,
  ) {}

  @DistributedInterval('reminders.heartbeat', { config: 'HEARTBEAT_EVERY' })
  async beat(_payload: unknown, ctx: TimerContext): Promise<void> {
    await this.outbox.send({ kind: 'heartbeat', due: ctx.due, replica: this.replica });
  }
}
