import { Inject, Injectable } from '@nestjs/common';
import { OnTimer, Timers } from '@sundial/client';
import type { Duration, JsonValue, Timer, TimerContext } from '@sundial/core';
import { Outbox } from './outbox';
import { REPLICA } from './replica';

export type ReminderPayload = {
  entity: string;
  text: string;
};

/** Reminders per entity (an invoice, a ticket…): one timer per reminder, keyed `reminder:<entity>:<id>`. */
@Injectable()
export class RemindersService {
  constructor(
    @Inject(Timers) private readonly timers: Timers,
    @Inject(Outbox) private readonly outbox: Outbox,
    @Inject(REPLICA) private readonly replica: string,
  ) {}

  create(entity: string, id: string, text: string, delay: Duration | number): Promise<Timer> {
    const payload: ReminderPayload = { entity, text };
    return this.timers.schedule({ key: key(entity, id), handler: 'reminder.due', payload, delay });
  }

  snooze(entity: string, id: string, delay: Duration | number): Promise<Timer> {
    return this.timers.reschedule(key(entity, id), { delay });
  }

  cancel(entity: string, id: string): Promise<boolean> {
    return this.timers.cancel(key(entity, id));
  }

  /** Every reminder of an entity, e.g. when the invoice is paid. */
  cancelAll(entity: string): Promise<number> {
    return this.timers.cancelAll(`reminder:${entity}:`);
  }

  @OnTimer('reminder.due')
  async due(payload: JsonValue, ctx: TimerContext): Promise<void> {
    const { entity, text } = payload as unknown as ReminderPayload;
    // A reminder cancelled or snoozed while it runs is not sent.
    if (ctx.signal.aborted) return;
    await this.outbox.send({ kind: 'reminder', due: ctx.due, replica: this.replica, entity, text });
  }
}

function key(entity: string, id: string): string {
  return `reminder:${entity}:${id}`;
}
