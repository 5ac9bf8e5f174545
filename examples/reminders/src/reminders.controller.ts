import { Body, Controller, Delete, Headers, HttpCode, Inject, Param, Post } from '@nestjs/common';
import type { Duration, Timer } from '@sundial/core';
import { RemindersService } from './reminders.service';

const IDEMPOTENCY_KEY = 'idempotency-key';

interface CreateReminder {
  text: string;
  delay: Duration | number;
}

/**
 * `POST /entities/:entity/reminders/:id`, `…/snooze`, `DELETE …`: a SundialError answers 4xx by its reason
 * (503 `unavailable` when Redis does not answer). Each takes an optional `Idempotency-Key` header, passed
 * on as the write's requestId: a client retries a 503 with the same key and changes nothing twice.
 */
@Controller('entities/:entity/reminders')
export class RemindersController {
  constructor(@Inject(RemindersService) private readonly reminders: RemindersService) {}

  @Post(':id')
  create(
    @Param('entity') entity: string,
    @Param('id') id: string,
    @Body() body: CreateReminder,
    @Headers(IDEMPOTENCY_KEY) requestId?: string,
  ): Promise<Timer> {
    return this.reminders.create(entity, id, body.text, body.delay, requestId);
  }

  @Post(':id/snooze')
  @HttpCode(200)
  snooze(
    @Param('entity') entity: string,
    @Param('id') id: string,
    @Body() body: { delay: Duration | number },
    @Headers(IDEMPOTENCY_KEY) requestId?: string,
  ): Promise<Timer> {
    return this.reminders.snooze(entity, id, body.delay, requestId);
  }

  @Delete(':id')
  async cancel(
    @Param('entity') entity: string,
    @Param('id') id: string,
    @Headers(IDEMPOTENCY_KEY) requestId?: string,
  ): Promise<{ cancelled: boolean }> {
    return { cancelled: await this.reminders.cancel(entity, id, requestId) };
  }

  @Delete()
  async cancelAll(
    @Param('entity') entity: string,
    @Headers(IDEMPOTENCY_KEY) requestId?: string,
  ): Promise<{ cancelled: number }> {
    return { cancelled: await this.reminders.cancelAll(entity, requestId) };
  }
}
