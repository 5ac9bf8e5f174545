import { Inject, Injectable } from '@nestjs/common';
import { OnTimer, Timers } from '@sundial/client';
import type { Duration, JsonValue, Timer, TimerContext, WriteOptions } from '@sundial/core';
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

  // `requestId` (the caller's Idempotency-Key): a write that answered `unavailable` (Redis did not answer;
  // it may or may not have run) is retried safely with the same one — the retry returns the first result.
  create(
    entity: string,
    id: string,
    text: string,
    delay: Duration | number,
    requestId?: string,
  ): Promise<Timer> {
    const payload: ReminderPayload = { entity, text };
    const spec = { key: key(entity, id), handler: 'reminder.due', payload, delay };
    return this.timers.schedule(spec, writeOptions(requestId));
  }

  snooze(entity: string, id: string, delay: Duration | number, requestId?: string): Promise<Timer> {
    return this.timers.reschedule(key(entity, id), { delay }, writeOptions(requestId));
  }

  cancel(entity: string, id: string, requestId?: string): Promise<boolean> {
    return this.timers.cancel(key(entity, id), writeOptions(requestId));
  }

  /** Every reminder of an entity, e.g. when the invoice is paid. */
  cancelAll(entity: string, requestId?: string): Promise<number> {
    return this.timers.cancelAll(`reminder:${entity}:`, writeOptions(requestId));
  }

  @OnTimer('reminder.due')
  async due(payload: JsonValue, ctx: TimerContext): Promise<void> {
    const { entity, text } = payload as unknown as ReminderPayload;
    // A reminder cancelled or snoozed while it runs is not sent.
    if (ctx.signal.aborted) return;
    await this.outbox.send({
      kind: 'reminder',
      due: ctx.due,
      replica: this.replica,
      entity,
      text,
      at: Date.now(),
    });
  }
}

function writeOptions(requestId: string | undefined): WriteOptions | undefined {
  return requestId === undefined ? undefined : { requestId };
}

function key(entity: string, id: string): string {
  return `reminder:${entity}:${id}`;
}
