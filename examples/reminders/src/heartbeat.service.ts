import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { ConfigService } from '@nestjs/config';
import { OnTimer, Timers } from '@sundial/client';
import { duration, type TimerContext } from '@sundial/core';
import { Outbox } from './outbox';
import { REPLICA } from './replica';

/** A heartbeat every HEARTBEAT_EVERY (default 5m), registered by whichever replica boots first. */
@Injectable()
export class HeartbeatService implements OnApplicationBootstrap {
  constructor(
    @Inject(Timers) private readonly timers: Timers,
    @Inject(Outbox) private readonly outbox: Outbox,
    @Inject(REPLICA) private readonly replica: string,
    @Inject(ConfigService) private readonly config: ConfigService,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    // 'replace' would restart the grid at every boot; 'keep' leaves the running heartbeat alone.
    const every = duration(this.config.get<string>('HEARTBEAT_EVERY') ?? '5m');
    await this.timers.schedule({
      key: 'reminders:heartbeat',
      handler: 'reminders.heartbeat',
      every,
      ifExists: 'keep',
    });
  }

  @OnTimer('reminders.heartbeat')
  async beat(_payload: unknown, ctx: TimerContext): Promise<void> {
    await this.outbox.send({ kind: 'heartbeat', due: ctx.due, replica: this.replica });
  }
}
